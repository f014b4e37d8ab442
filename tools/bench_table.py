#!/usr/bin/env python3
"""Renders a `metrale bench --json` record as the tables of docs/performance.md.

    tools/bench_table.py bench/results/h200-<commit>.json

Prints, in Markdown: one row per shape x m (the fastest entry launched as the seed
launches, the plan's choice, the fastest with programmatic dependent launch, the plan's
choice for callers launching with it, both baselines and the ratios, and what the read
ceiling's kernel reaches on the layer's bytes per launch where the record has it), then
the ranges per layer class that the issue's targets name, and how often each of the
plan's choices is the fastest of its kind, with the cases where it is not. Only numbers
in the record are used.

    tools/bench_table.py --plan RECORD.json [RECORD.json ...]

Checks the plan alone on records of the same shapes and entries (e.g. several runs of
`bench --no-baselines`; `tools/device_run.sh plancheck` makes them): each entry's time is
the mean over the records, and for each case the plan's choice and its PDL choice are set
against the fastest entry of their kind, with the cases beyond 2 % listed.

    tools/bench_table.py --replan PLAN.txt RECORD.json [RECORD.json ...]

Sets another plan's choices (PLAN.txt: what `metrale plan` prints for the records' shapes
and token counts, e.g. from a build with a rule changed) against the records' own, each
entry's time the mean over the records: per side (without and with PDL) the cases whose
choice changed, the new choice's time over the old one's (range, median), how many of all
cases the new choice puts within 2 % of the fastest entry of its kind, and the changed
cases one per line. A choice the records did not time is named, not counted.

    tools/bench_table.py --plan-args RECORD.json [RECORD.json ...]

Prints the `metrale plan` options for the records' cases (each shape once, in the records'
order, then the token counts, the device's SMs and, where recorded, its DRAM bandwidth),
the PLAN.txt of --replan in one line:
`metrale plan $(tools/bench_table.py --plan-args R.json) > PLAN.txt`.

    tools/bench_table.py --compare OLD.json NEW.json

Sets two records side by side, case by case (shape x m in both): the time in NEW over
the time in OLD of the plan's choice, its choice with PDL, cuBLASLt FP8, cuBLAS BF16 and
the read kernel at the layer's size, then per column the range and the geometric mean,
and the two read ceilings. A ratio under 1 is faster in NEW.
"""
import json
import re
import signal
import statistics
import sys

# Piped into head or less, the table ends quietly where the reader stops.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)

LARGE = 64 << 20   # weight bytes from which a layer counts as large
MEDIUM = 16 << 20
SKINNY = {("DeepSeek-V3", "q_a"), ("DeepSeek-V3", "kv_a")}


def fastest(entries, with_pdl):
    ok = [e for e in entries if e["status"] == "ok" and (with_pdl or not e["entry"].endswith("+pdl"))]
    return min(ok, key=lambda e: e["us"]) if ok else None


def fastest_of_kind(entries, with_pdl):
    """The fastest entry launched without PDL, or (with_pdl) the fastest "+pdl" entry."""
    return fastest([e for e in entries if e["entry"].endswith("+pdl") == with_pdl], with_pdl)


def entry(result, name):
    """The entry called `name` if it ran correctly, else None."""
    return next((e for e in result["entries"] if e["entry"] == name and e["status"] == "ok"), None)


def baseline(result, name):
    for b in result["baselines"]:
        if b["name"] == name and b["ok"]:
            return b
    return None


def ratio(base, entry):
    return f"{base['us'] / entry['us']:.2f}x" if base and entry else "-"


def size_ceiling_pct(record, r):
    """The read ceiling's kernel on this layer's bytes per launch, in % of the ceiling."""
    us = r.get("size_ceiling_us")
    return 100.0 * r["weight_bytes"] / us / 1e3 / record["ceiling"]["gbps"] if us else None


def load(path):
    """The record at `path`; a file that cannot be read or parsed ends the run with one
    line saying which and why, not a traceback."""
    try:
        with open(path) as f:
            record = json.load(f)
    except OSError as e:
        sys.exit(f"bench_table.py: cannot read {path}: {e.strerror or e}")
    except ValueError as e:  # json.JSONDecodeError and UnicodeDecodeError
        sys.exit(f"bench_table.py: cannot read {path}: {e}")
    ceiling = record.get("ceiling") if isinstance(record, dict) else None
    gbps = ceiling.get("gbps") if isinstance(ceiling, dict) else None
    if not isinstance(record.get("results") if isinstance(record, dict) else None, list) \
            or not isinstance(gbps, (int, float)) or gbps <= 0:
        sys.exit(f"bench_table.py: {path} is not a `metrale bench --json` record "
                 "(no results, or no read ceiling)")
    return record


def class_order(key):
    """Layer classes in the issue's order, each by token count (1, 8, 16, not 1, 16, 8)."""
    head, _, m = key.partition(", m = ")
    return (head, int(m.split()[0]) if m else 0)


def warm_up(warm_ms):
    return (f"{warm_ms} ms of replays per graph" if warm_ms
            else "one replay per graph")


def main(path):
    record = load(path)
    method = record.get("method", {})
    # Records before item 178 timed each m's list in its order, then the baselines.
    order = method.get("order", "per m: the list in its order, then the baselines")
    device = record.get("device", {})
    if device.get("name"):
        bandwidth = (f", DRAM {device['dram_gbps']} GB/s peak" if device.get("dram_gbps")
                     else "")
        print(f"Device: {device['name']} ({device.get('sm_count', '?')} SMs{bandwidth}).")
    print(f"Read ceiling in this run: {record['ceiling']['gbps']:.0f} GB/s; commit "
          f"{record['commit']}, {record['date']}. Order: {order}; before the timed "
          f"replays {warm_up(method.get('warm_ms', 0))}"
          + (f"; the run took {method['wall_s']:.0f} s" if "wall_s" in method else "") + ".\n")
    print("| shape | N x K | floor us | m | best entry | us | % ceil | auto choice | us | "
          "with PDL | us | % ceil | auto choice with PDL | us | cuBLASLt FP8 us | "
          "cuBLAS BF16 us | best vs FP8 | best vs BF16 | PDL vs FP8 | read kernel at this size |")
    print("|" + "---|" * 20)
    classes = {}
    for r in record["results"]:
        best = fastest(r["entries"], False)
        pdl = fastest(r["entries"], True)
        choice = entry(r, r["choice"])
        choice_pdl = entry(r, r.get("choice_pdl"))
        fp8, bf16 = baseline(r, "cublaslt_fp8"), baseline(r, "cublas_bf16")
        us = lambda e: f"{e['us']:.2f}" if e else "-"
        pct = lambda e: f"{e['pct_ceiling']:.0f}%" if e else "-"
        size_pct = size_ceiling_pct(record, r)
        print(f"| {r['model']} {r['layer']} | {r['n']}x{r['k']} | {r['floor_us']:.2f} | {r['m']} | "
              f"{best['entry'] if best else '-'} | {us(best)} | {pct(best)} | {r['choice']} | "
              f"{us(choice)} | {pdl['entry'] if pdl else '-'} | {us(pdl)} | {pct(pdl)} | "
              f"{r.get('choice_pdl', '-')} | {us(choice_pdl)} | {us(fp8)} | "
              f"{us(bf16)} | {ratio(fp8, best)} | {ratio(bf16, best)} | {ratio(fp8, pdl)} | "
              f"{f'{size_pct:.0f}%' if size_pct else '-'} |")
        if (r["model"], r["layer"]) in SKINNY:
            key = "q_a and kv_a (speed-up over cuBLASLt FP8)"
            # For these the third figure is the speed-up over cuBLASLt that the read
            # ceiling's kernel itself would have: it only reads the layer's bytes.
            reader = fp8["us"] / r["size_ceiling_us"] if fp8 and r.get("size_ceiling_us") else None
            value = (fp8["us"] / best["us"], fp8["us"] / pdl["us"] if pdl else None,
                     reader) if fp8 and best else None
        else:
            key = ">= 64 MiB" if r["weight_bytes"] >= LARGE else "16-64 MiB"
            key += f", m = {r['m']} (% of the ceiling)"
            value = (best["pct_ceiling"], pdl["pct_ceiling"] if pdl else None,
                     size_pct) if best else None
        if value:
            classes.setdefault(key, []).append(value)
    print("\n| layers | best without PDL | best with PDL | read kernel at these sizes |\n"
          "|---|---|---|---|")
    for key in sorted(classes, key=class_order):
        # A record without PDL entries (or read kernel figures) has no value there: "-".
        a, b, c = ([v[i] for v in classes[key] if v[i] is not None] for i in range(3))
        fmt = (lambda x: f"{x:.2f}x") if "speed-up" in key else (lambda x: f"{x:.0f} %")
        span = lambda xs: f"{fmt(min(xs))} - {fmt(max(xs))}" if xs else "-"
        print(f"| {key} | {span(a)} | {span(b)} | {span(c)} |")
    beats = lambda name, with_pdl: sum(
        1 for r in record["results"]
        if baseline(r, name) and fastest(r["entries"], with_pdl)
        and fastest(r["entries"], with_pdl)["us"] < baseline(r, name)["us"])
    n = len(record["results"])
    print(f"\nFaster than cuBLASLt FP8 in {beats('cublaslt_fp8', False)} of {n} cases "
          f"({beats('cublaslt_fp8', True)} with PDL); faster than cuBLAS BF16 in "
          f"{beats('cublas_bf16', False)} ({beats('cublas_bf16', True)} with PDL). "
          f"{record['wrong']} WRONG, {record['errors']} ERROR.")
    plan_summary(record)


def plan_summary(record, tolerance=None):
    """The plan's choice against the fastest entry without PDL, and its PDL choice (records
    from 88bb9cd on) against the fastest "+pdl" entry; with a tolerance, how many cases lie
    within it and only the misses beyond it."""
    for label, key, kind, with_pdl in (
            ("The plan's choice", "choice", "entry without PDL", False),
            ("Its choice with PDL", "choice_pdl", "+pdl entry", True)):
        rows = [(r, entry(r, r.get(key)), fastest_of_kind(r["entries"], with_pdl))
                for r in record["results"]]
        # (the choice's time over the fastest's, case, choice, fastest)
        rows = [(c["us"] / b["us"], r, c, b) for r, c, b in rows if c and b]
        if not rows:
            continue
        hits = sum(1 for _, _, c, b in rows if c["entry"] == b["entry"])
        ratios = [x for x, _, _, _ in rows]
        print(f"{label} is the fastest {kind} in {hits} of {len(rows)} cases; "
              f"at worst it takes {max(ratios):.3f}x the fastest's time.")
        limit = 1.0 if tolerance is None else 1.0 + tolerance
        if tolerance is not None:
            within = sum(1 for x in ratios if x <= limit)
            print(f"  within {100 * tolerance:.0f} % in {within} of {len(rows)} cases; "
                  f"median {statistics.median(ratios):.3f}x")
        # The misses, slowest first: where the plan's rules and the measurement disagree.
        misses = sorted((row for row in rows
                         if row[2]["entry"] != row[3]["entry"] and row[0] > limit),
                        key=lambda row: -row[0])
        for x, r, c, b in misses:
            print(f"  {layer_name(r)} m = {r['m']}: {c['entry']} {c['us']:.2f} us "
                  f"against {b['entry']} {b['us']:.2f} ({x:.3f}x)")


def compare(old_path, new_path):
    """Per case in both records, NEW's time over OLD's for the plan's choices, the
    baselines and the read kernel at the layer's size; then each column's range and
    geometric mean."""
    old, new = load(old_path), load(new_path)
    print(f"{new['commit'][:7]} over {old['commit'][:7]}: read ceiling "
          f"{new['ceiling']['gbps']:.0f} against {old['ceiling']['gbps']:.0f} GB/s "
          f"({new['ceiling']['gbps'] / old['ceiling']['gbps']:.3f}x).\n")
    columns = ("choice", "choice with PDL", "cuBLASLt FP8", "cuBLAS BF16", "read kernel")

    def times(r):
        size = r.get("size_ceiling_us")
        return (entry(r, r["choice"]), entry(r, r.get("choice_pdl")),
                baseline(r, "cublaslt_fp8"), baseline(r, "cublas_bf16"),
                {"us": size} if size else None)

    print("| case | " + " | ".join(columns) + " |\n|---|" + "---|" * len(columns))
    olds = {(r["n"], r["k"], r["m"]): r for r in old["results"]}
    ratios = [[] for _ in columns]
    for r in new["results"]:
        o = olds.get((r["n"], r["k"], r["m"]))
        if o is None:
            continue
        cells = []
        for i, (a, b) in enumerate(zip(times(o), times(r))):
            # Only the same entry is compared: a plan that changed its choice says so.
            same = a and b and (i > 1 or a["entry"] == b["entry"])
            if same:
                ratios[i].append(b["us"] / a["us"])
            cells.append(f"{b['us'] / a['us']:.3f}" if same else "-")
        print(f"| {layer_name(r)} m = {r['m']} | " + " | ".join(cells) + " |")
    print()
    for name, values in zip(columns, ratios):
        if values:
            mean = statistics.geometric_mean(values)
            print(f"{name}: {min(values):.3f}-{max(values):.3f}x, geometric mean {mean:.3f}x "
                  f"over {len(values)} cases")
        else:
            print(f"{name}: no case in both records")


def read_plan(path):
    """`metrale plan` output: {(n, k, m): (choice, choice with PDL)}."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        sys.exit(f"bench_table.py: cannot read {path}: {e.strerror or e}")
    plan = {}
    for line in lines:
        m = re.search(r"(\d+) x (\d+)\s+m =\s*(\d+): (\S+) .*\| (\S+) ", line)
        if m:
            plan[(int(m[1]), int(m[2]), int(m[3]))] = (m[4], m[5])
    if not plan:
        sys.exit(f"bench_table.py: {path} holds no line of `metrale plan` output")
    return plan


def replan(plan_path, record_paths):
    """Another plan's choices against the records' own (mean_record's times)."""
    plan = read_plan(plan_path)
    record = mean_record(record_paths)
    for side, key in ((0, "choice"), (1, "choice_pdl")):
        ratios, within, cases, unmeasured, lines = [], 0, 0, [], []
        for r in record["results"]:
            choices = plan.get((r["n"], r["k"], r["m"]))
            if choices is None or not r.get(key):
                continue
            new_name = choices[side]  # `metrale plan` names PDL forms with their "+pdl"
            old, new = entry(r, r[key]), entry(r, new_name)
            best = fastest_of_kind(r["entries"], bool(side))
            if best is None:
                continue  # no entry of this side timed (plancheck sets of +pdl entries)
            if old is None or new is None:
                unmeasured.append(f"{layer_name(r)} m = {r['m']}: "
                                  f"{new_name if new is None else r[key]}")
                continue
            cases += 1
            within += new["us"] <= 1.02 * best["us"]
            if new_name != r[key]:
                ratios.append(new["us"] / old["us"])
                lines.append(f"  {layer_name(r)} m = {r['m']}: {r[key]} {old['us']:.2f} us -> "
                             f"{new_name} {new['us']:.2f} ({ratios[-1]:.3f}x; fastest "
                             f"{best['us']:.2f})")
        if not cases and not unmeasured:
            continue
        label = "with PDL" if side else "without PDL"
        if ratios:
            print(f"{label}: {len(ratios)} of {cases} cases changed, the new choice "
                  f"{min(ratios):.3f}-{max(ratios):.3f}x the old one's time, median "
                  f"{statistics.median(ratios):.3f}x; within 2 % of the fastest in {within} "
                  f"of {cases}")
        else:
            print(f"{label}: 0 of {cases} cases changed; within 2 % of the fastest in "
                  f"{within} of {cases}")
        for line in lines + [f"  not timed: {u}" for u in unmeasured]:
            print(line)


def plan_args(record_paths):
    """The `metrale plan` options that cover every case of the records, and the device's
    SMs and DRAM bandwidth where the records give them (records before the bandwidth was
    recorded give none: `metrale plan` then plans for a device of unknown bandwidth)."""
    shapes, tokens, devices = {}, set(), set()
    for path in record_paths:
        record = load(path)
        device = record.get("device", {})
        devices.add((device.get("sm_count"), device.get("dram_gbps")))
        for r in record["results"]:
            shapes[(r["n"], r["k"])] = None
            tokens.add(r["m"])
    if len(devices) > 1:
        sys.exit("bench_table.py: the records come from devices of other SMs or bandwidth")
    sm_count, dram_gbps = devices.pop() if devices else (None, None)
    options = [f"--shape {n}x{k}" for n, k in shapes]
    options += ["--m", ",".join(str(m) for m in sorted(tokens))]
    if sm_count:
        options += ["--sms", str(sm_count)]
    if dram_gbps:
        options += ["--dram-gbps", str(dram_gbps)]
    print(" ".join(options))


def layer_name(r):
    """The model and layer of a default-set case, else (a --shape case) its N x K."""
    return f"{r['model']} {r['layer']}" if r.get("model") else f"{r['n']} x {r['k']}"


def mean_record(paths):
    """The first record with each entry's time the mean over all records (entries that ran
    correctly in every one of them)."""
    records = [load(p) for p in paths]
    merged = records[0]
    for r in merged["results"]:
        key = (r["n"], r["k"], r["m"])
        others = [next((x for x in rec["results"] if (x["n"], x["k"], x["m"]) == key), None)
                  for rec in records[1:]]
        for e in r["entries"]:
            found = [entry(o, e["entry"]) if o else None for o in others]
            if e["status"] == "ok" and None not in found:
                e["us"] = statistics.mean([e["us"]] + [f["us"] for f in found])
            else:
                e["status"] = "not in every record"
    return merged


if __name__ == "__main__":
    args = sys.argv[1:]
    # Only --plan, --plan-args, --replan and --compare (first), -h and --help are options;
    # anything else that starts with '-' is a mistyped one, not a record to open.
    modes = ("--plan", "--plan-args", "--replan", "--compare")
    unknown = [a for i, a in enumerate(args)
               if a.startswith("-") and a not in ("-h", "--help")
               and not (i == 0 and a in modes)]
    if unknown:
        print(f"bench_table.py: unknown option {unknown[0]} (see --help)", file=sys.stderr)
        sys.exit(2)
    if args[:1] == ["--plan"] and len(args) > 1:
        record = mean_record(args[1:])
        print(f"{len(args) - 1} record(s), {len(record['results'])} cases; commit "
              f"{record['commit']}.")
        plan_summary(record, tolerance=0.02)
    elif args[:1] == ["--plan-args"] and len(args) > 1:
        plan_args(args[1:])
    elif args[:1] == ["--replan"] and len(args) > 2:
        replan(args[1], args[2:])
    elif args[:1] == ["--compare"] and len(args) == 3:
        compare(args[1], args[2])
    elif len(args) == 1 and not args[0].startswith("-"):
        main(args[0])
    else:
        asked = args in (["-h"], ["--help"])
        print(__doc__.strip(), file=sys.stdout if asked else sys.stderr)
        sys.exit(0 if asked else 2)
