#!/usr/bin/env python3
"""Summarises the per-CTA timeline that `metrale bench --timeline FILE` writes (stream-K
built with METRALE_DIAG_TIMELINE, w8a16_gemm_m16_streamk.cu): per layer, m and entry,
where a launch's time goes between its first CTA's start and its last CTA's end.

  python3 tools/timeline_summary.py [--per-sm] FILE

Columns (us, from the launch's earliest CTA start; p50 / max over its CTAs):
  span      the last CTA's end
  start     CTA starts (max: how late the last CTA began)
  ramp      a CTA's first stage landed, from its own start
  landed    its last stage landed
  loop      its loop's end (all units computed)
  reduce    end - loop end, over the CTAs that add up a split tile
  after     the last CTA's end less the latest last-landed stage (the launch's tail
            once every byte is in)
  last CTA  the CTA that ends last: its index, units and whether it adds up a tile

With --per-sm, instead: per layer, m and entry, the SMs grouped by the units their CTAs
ran together, with each group's SM count and its SMs' ends (the latest CTA end on the
SM; mean and max, us), and how many SMs ran CTAs c and c + CTAs / 2 together.
"""
import statistics
import sys


def per_sm(groups):
    print("| layer | m | entry | SMs with c and c + CTAs / 2 | units per SM: SMs, end mean / max |")
    print("|---|---|---|---|---|")
    for (layer, m, entry), rows in groups.items():
        sms = {}
        for cta, sm, units, _, t in rows:
            s = sms.setdefault(sm, [[], 0, 0.0])
            s[0].append(cta)
            s[1] += units
            s[2] = max(s[2], t[5])
        half = len(rows) // 2
        paired = sum(1 for ctas, _, _ in sms.values()
                     if len(ctas) == 2 and abs(ctas[0] - ctas[1]) == half)
        by_units = {}
        for _, units, end in sms.values():
            by_units.setdefault(units, []).append(end)
        cells = "; ".join(f"{u}: {len(e)}, {statistics.mean(e):.2f} / {max(e):.2f}"
                          for u, e in sorted(by_units.items()))
        print(f"| {layer} | {m} | {entry} | {paired} of {len(sms)} | {cells} |")


def main():
    args = sys.argv[1:]
    by_sm = "--per-sm" in args
    args = [a for a in args if a != "--per-sm"]
    unknown = [a for a in args if a.startswith("-") and a not in ("-h", "--help")]
    if unknown:
        print(f"timeline_summary.py: unknown option {unknown[0]} (see --help)", file=sys.stderr)
        return 2
    if len(args) != 1 or args[0] in ("-h", "--help"):
        asked = args in (["-h"], ["--help"])
        print(__doc__.strip(), file=sys.stdout if asked else sys.stderr)
        return 0 if asked else 2
    path = args[0]
    groups = {}
    try:
        with open(path) as f:
            for number, line in enumerate(f, 1):
                if line.startswith("#") or not line.strip():
                    continue
                v = line.split()
                if len(v) < 13:
                    raise ValueError(f"line {number}: {len(v)} fields, not 13")
                try:
                    key = (v[0], int(v[1]), v[2])
                    cta, sm, units, adds = int(v[3]), int(v[4]), int(v[5]), int(v[6])
                    t = [int(x) / 1000.0 for x in v[7:13]]
                except ValueError as e:
                    raise ValueError(f"line {number}: {e}") from None
                groups.setdefault(key, []).append((cta, sm, units, adds, t))
    except OSError as e:
        sys.exit(f"timeline_summary.py: cannot read {path}: {e.strerror or e}")
    except ValueError as e:  # a malformed line, or a file that is not text
        sys.exit(f"timeline_summary.py: cannot read {path}: {e}")
    if not groups:
        sys.exit(f"timeline_summary.py: {path} holds no timeline record")
    if by_sm:
        per_sm(groups)
        return 0
    print("| layer | m | entry | CTAs | span | start p50/max | ramp p50/max | landed p50/max |"
          " loop p50/max | reduce p50/max | after | last CTA |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (layer, m, entry), rows in groups.items():
        start = [r[4][0] for r in rows]
        ramp = [r[4][2] - r[4][0] for r in rows]
        landed = [r[4][3] for r in rows]
        loop = [r[4][4] for r in rows]
        end = [r[4][5] for r in rows]
        reduce = [r[4][5] - r[4][4] for r in rows if r[3]] or [0.0]
        last = max(rows, key=lambda r: r[4][5])
        med = statistics.median

        def pm(xs):
            return f"{med(xs):.2f} / {max(xs):.2f}"
        print(f"| {layer} | {m} | {entry} | {len(rows)} | {max(end):.2f} | {pm(start)} | "
              f"{pm(ramp)} | {pm(landed)} | {pm(loop)} | {pm(reduce)} | "
              f"{max(end) - max(landed):.2f} | {last[0]} ({last[2]} units"
              f"{', adds up' if last[3] else ''}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
