#!/usr/bin/env python3
"""Summarises the output of `tools/device_run.sh ab`: each define set against the base.

    tools/ab_summary.py AB_OUTPUT [--base SET] [--match TEXT] [--per-entry]

The `ab` step runs the benchmark once per define set of AB_DEFINES and prints, per set,
a `--- defines: SET` line and the benchmark's rows. Sets that repeat (e.g. '-;X=1;-;X=1')
are averaged. For every other set against the base ('-' unless --base names one) this
prints, per layer, m and launch kind (with or without PDL), the fastest entry of each
side and their ratio, then the ratio over all rows both sides timed (min, median, max)
and the spread between repeated runs of the base. --match keeps only the entries whose
name contains TEXT. --per-entry adds, per entry name, its ratio over the rows both sides
timed (min, median, max), overall and per m: one form of the kernel against itself, where
the fastest entry per row would mix forms. Ratios below 1 mean the set ran faster than
the base.
"""

import argparse
import re
import statistics
import sys
from collections import defaultdict


def parse(path):
    """[(set name, {(layer, m, entry): us})] in the order the sets ran."""
    runs, current, layer = [], None, None
    with open(path) as f:
        for line in f:
            if line.startswith("--- defines:"):
                current = {}
                runs.append((line.split(":", 1)[1].strip(), current))
                continue
            header = re.match(r"^(\S.*?): N=(\d+) K=(\d+)", line)
            if header:
                layer = header.group(1)
                continue
            # A time is a positive decimal; a row without one (a failed entry's) is skipped.
            row = re.match(r"^\s+(\d+)\s+(w8a16\S+)\s+(\d+(?:\.\d*)?)\s", line)
            if row and current is not None and layer is not None and float(row.group(3)) > 0:
                current[(layer, int(row.group(1)), row.group(2))] = float(row.group(3))
    return runs


def averaged(runs, name, match):
    """{key: mean us} over the runs of set `name`, and the runs themselves."""
    chosen = [r for n, r in runs if n == name]
    keys = set.intersection(*(set(r) for r in chosen)) if chosen else set()
    keys = {k for k in keys if match in k[2]}
    return {k: statistics.mean(r[k] for r in chosen) for k in keys}, chosen


def print_per_entry(base, test, keys):
    """Per entry name: the set's time over the base's, overall and per m."""
    def summary(rs):
        return (f"min {min(rs):.3f}, median {statistics.median(rs):.3f}, "
                f"max {max(rs):.3f} ({len(rs)} rows)")
    by_entry = defaultdict(list)
    for k in keys:
        by_entry[k[2]].append(k)
    for entry, ks in sorted(by_entry.items()):
        print(f"  {entry}: {summary([test[k] / base[k] for k in ks])}")
        for m in sorted({k[1] for k in ks}):
            print(f"    m={m:2d}: {summary([test[k] / base[k] for k in ks if k[1] == m])}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ab_output", help="the ab step's output (e.g. $OUT/ab.log)")
    parser.add_argument("--base", default="-", help="the base define set (default '-')")
    parser.add_argument("--match", default="", help="only entries whose name contains TEXT")
    parser.add_argument("--per-entry", action="store_true",
                        help="also each entry's ratio, overall and per m")
    args = parser.parse_args()

    try:
        runs = parse(args.ab_output)
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else e
        sys.exit(f"ab_summary.py: cannot read {args.ab_output}: {reason}")
    if not runs:
        sys.exit(f"{args.ab_output}: no '--- defines:' sections")
    base, base_runs = averaged(runs, args.base, args.match)
    if not base:
        sys.exit(f"{args.ab_output}: no rows for the base set '{args.base}'")
    names = list(dict.fromkeys(n for n, _ in runs if n != args.base))
    for name in names:
        test, _ = averaged(runs, name, args.match)
        keys = sorted(set(base) & set(test))
        print(f"=== {name} against {args.base} ({len(keys)} rows)")
        groups = defaultdict(list)
        for k in keys:
            groups[(k[0], k[1], "+pdl" in k[2])].append(k)
        for (layer, m, pdl), ks in groups.items():
            b = min(ks, key=lambda k: base[k])
            t = min(ks, key=lambda k: test[k])
            print(f"  {layer:22s} m={m:2d} {'pdl' if pdl else '   '}  "
                  f"base {base[b]:8.2f} {b[2]:40s} set {test[t]:8.2f} {t[2]:40s} "
                  f"{test[t] / base[b]:.3f}")
        ratios = [test[k] / base[k] for k in keys]
        if ratios:
            print(f"  every row: min {min(ratios):.3f}, median {statistics.median(ratios):.3f}, "
                  f"max {max(ratios):.3f}")
        if args.per_entry:
            print_per_entry(base, test, keys)
    if len(base_runs) > 1:
        keys = set.intersection(*(set(r) for r in base_runs))
        spread = [abs(base_runs[0][k] - base_runs[1][k]) / base_runs[0][k] for k in keys]
        print(f"base run to run: median {statistics.median(spread):.4f}, "
              f"max {max(spread):.4f} ({len(base_runs)} runs)")


if __name__ == "__main__":
    main()
