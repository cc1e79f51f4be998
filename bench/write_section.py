#!/usr/bin/env python3
"""Replaces (or appends) one '## ' section of a markdown file with the text on stdin.

    some_command | bench/write_section.py docs/BENCHMARKS.md "## Heading"

The section on stdin must start with the heading line; other sections are kept as they are.
"""
import os
import sys


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    path, heading = sys.argv[1], sys.argv[2]
    section = sys.stdin.read().rstrip("\n") + "\n"
    if not section.startswith(heading + "\n"):
        print(f"write_section: the text must start with {heading!r}", file=sys.stderr)
        return 2
    text = (open(path).read() if os.path.exists(path) else
            "# Benchmarks\n\nMeasured results; each figure names the command that produced it.\n")
    start = text.find(heading + "\n")
    if start >= 0:
        nxt = text.find("\n## ", start + len(heading))
        rest = text[nxt + 1:] if nxt >= 0 else ""
        text = text[:start] + section + ("\n" + rest if rest else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(path, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
