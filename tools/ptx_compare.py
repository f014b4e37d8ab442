#!/usr/bin/env python3
"""Compares two `metrale compile --dump-ptx` directories kernel by kernel.

    tools/ptx_compare.py BASE_DIR OTHER_DIR

For every PTX file of BASE_DIR (one per module and target) and every entry function in
it, prints `same` or `differs` against the same function of the same file in OTHER_DIR,
or `missing` where OTHER_DIR lacks the file or the function; then a count. A kernel whose
PTX is the same is compiled to the same code, so a change that a define switches (e.g.
`--define SKINNY_DEEP_CLAMP=0` against the default) can be shown to touch only the
kernels it means to, and a measurement of one side to stand for the kernels that match it
(docs/performance.md, item 192). Exit status 0 whatever the result; 1 where a directory
cannot be read.
"""

import argparse
import os
import re
import sys

ENTRY = re.compile(r"\.entry\s+(\w+)\s*\(")


def entries(text):
    """{entry name: its PTX from `.entry` to its closing brace}."""
    out = {}
    for match in ENTRY.finditer(text):
        end = text.find("\n}\n", match.start())
        out[match.group(1)] = text[match.start():end if end >= 0 else len(text)]
    return out


def ptx_files(directory):
    try:
        return sorted(f for f in os.listdir(directory) if f.endswith(".ptx"))
    except OSError as e:
        sys.exit(f"ptx_compare.py: cannot read {directory}: {e.strerror}")


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        sys.exit(f"ptx_compare.py: cannot read {path}: {e.strerror}")


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[1:]))
    parser.add_argument("base", help="a --dump-ptx directory")
    parser.add_argument("other", help="another, of the same modules")
    args = parser.parse_args()
    counts = {"same": 0, "differs": 0, "missing": 0}
    other_files = set(ptx_files(args.other))
    for name in ptx_files(args.base):
        base = entries(read(os.path.join(args.base, name)))
        other = entries(read(os.path.join(args.other, name))) if name in other_files else {}
        for entry, text in sorted(base.items()):
            verdict = "missing" if entry not in other else (
                "same" if other[entry] == text else "differs")
            counts[verdict] += 1
            print(f"{name} {entry}: {verdict}")
    print(f"{counts['same']} same, {counts['differs']} differ, {counts['missing']} missing")


if __name__ == "__main__":
    main()
