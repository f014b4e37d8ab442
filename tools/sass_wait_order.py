#!/usr/bin/env python3
"""Checks that kernels request their weights before they wait for the preceding grid.

    tools/sass_wait_order.py [--skip NAME]... [LISTING...]    (default: standard input)

A listing is `cuobjdump --dump-sass MODULE.cubin` output, one cuobjdump call per cubin:
given several cubins in one call, cuobjdump 13.0 printed no listing.

Under programmatic dependent launch a kernel issues its first weight loads, which depend
on nothing, and only then waits for the preceding kernel (`griddepcontrol.wait`, SASS
`ACQBULK`) before it reads activations. ptxas may schedule the wait above `.nc` loads, of
memory it takes no grid to write, and then a launch requests nothing until the preceding
one ends (docs/performance.md, item 194). For every function of the SASS listings given
(files, or standard input) this prints one line: `ok` with the weight loads ahead of its
first ACQBULK (16-byte loads that skip L1, `LDG...NA...128`, or bulk and tensor copies),
`waits first` where it has such loads but none ahead of the wait, or `no wait` / `no
weight loads`. A text-order check holds for kernels whose warps run one path; --skip
names a kernel whose warps take roles (stream-K's producer and consumers), which is then
listed as `skipped`. Exit status 1 if any function waits first, 2 on bad usage or an
unreadable file, else 0.
"""

import argparse
import re
import sys

FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
OPCODE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")


def is_weight_load(opcode):
    if opcode.startswith("LDG.") and ".NA." in opcode + "." and ".128" in opcode:
        return True
    return opcode.startswith(("UBLKCP", "UTMALDG"))


def functions(lines):
    """[(name, [opcode, ...])] in listing order."""
    out = []
    for line in lines:
        match = FUNCTION.match(line)
        if match:
            out.append((match.group(1), []))
            continue
        match = OPCODE.search(line)
        if match and out:
            out[-1][1].append(match.group(1))
    return out


def verdict(opcodes):
    waits = [i for i, op in enumerate(opcodes) if op == "ACQBULK"]
    loads = [i for i, op in enumerate(opcodes) if is_weight_load(op)]
    if not waits:
        return "no wait"
    if not loads:
        return "no weight loads"
    ahead = sum(1 for i in loads if i < waits[0])
    return f"ok ({ahead} ahead of the wait)" if ahead else "waits first"


def main():
    parser = argparse.ArgumentParser(
        description="Checks that kernels issue weight loads before griddepcontrol.wait.")
    parser.add_argument("files", nargs="*", help="cuobjdump --dump-sass output (default: stdin)")
    parser.add_argument("--skip", action="append", default=[], metavar="NAME",
                        help="a kernel whose warps take roles: listed, not checked")
    args = parser.parse_args()
    lines = []
    try:
        for path in args.files:
            with open(path, encoding="utf-8") as f:
                lines.extend(f.read().splitlines())
    except OSError as e:
        print(f"sass_wait_order.py: cannot read {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    if not args.files:
        lines = sys.stdin.read().splitlines()
    found = functions(lines)
    if not found:
        print("sass_wait_order.py: no function in the input (cuobjdump --dump-sass output?)",
              file=sys.stderr)
        # What was read instead says whether the tool failed or its listing form changed.
        for line in [line for line in lines if line.strip()][:5]:
            print(f"  {line.strip()[:100]}", file=sys.stderr)
        return 2
    failed = 0
    for name, opcodes in found:
        result = "skipped" if name in args.skip else verdict(opcodes)
        failed += result == "waits first"
        print(f"{name}: {result}")
    print(f"{len(found)} function(s), {failed} waiting before their weight loads")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
