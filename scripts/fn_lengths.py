#!/usr/bin/env python3
"""The longest functions of the given Rust files or folders, in lines from
`fn` to its closing brace (tests included, marked), longest first.

    python3 scripts/fn_lengths.py src/cli src/pipeline --top 10
"""
import argparse
import os
import re

FN = re.compile(r'^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:unsafe\s+)?fn\s+(\w+)')


def functions(path):
    """(lines, name, line number, in a test module) of each fn of a file."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    test_from = next((i for i, l in enumerate(lines) if l.startswith("mod tests")), len(lines))
    for i, line in enumerate(lines):
        m = FN.match(line)
        if not m or line.rstrip().endswith(";"):
            continue
        depth, started = 0, False
        for j in range(i, len(lines)):
            # Braces in strings and chars are rare enough in signatures and
            # bodies here to count them plainly; comments are dropped.
            code = re.sub(r'//.*', '', lines[j])
            code = re.sub(r'"(\\.|[^"\\])*"', '""', code)
            code = re.sub(r"'(\\.|[^'\\])'", "''", code)
            depth += code.count("{") - code.count("}")
            started = started or "{" in code
            if started and depth <= 0:
                out.append((j - i + 1, m.group(2), i + 1, i > test_from))
                break
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--no-tests", action="store_true", help="leave out test functions")
    a = ap.parse_args()
    for root in a.paths:
        files = [root] if root.endswith(".rs") else [
            os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".rs")]
        found = [(n, name, f, line, test) for f in sorted(files)
                 for n, name, line, test in functions(f) if not (test and a.no_tests)]
        found.sort(reverse=True)
        print(f"{root}: {len(found)} functions; longest:")
        for n, name, f, line, test in found[:a.top]:
            print(f"  {n:4} {f}:{line} {name}{' (test)' if test else ''}")


if __name__ == "__main__":
    main()
