#!/usr/bin/env python3
"""Average words a sentence of Markdown pages: prose only (code blocks, tables and headings left
out), a sentence ending at '.', '!' or '?' before a capital, a backquote or a parenthesis.

Usage: sentence_length.py [--max N] FILE...
  --max N  exit 1 when a page averages more than N words a sentence (the guides' bound is 30)"""
import re
import sys


def average(path):
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
    prose = " ".join(line for line in text.splitlines()
                     if not line.lstrip().startswith(("|", "#", "![")))
    sentences = [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`(*])", prose) if len(s.split()) > 2]
    words = sum(len(s.split()) for s in sentences)
    return len(sentences), words / max(1, len(sentences))


def main(argv):
    limit = None
    if argv[:1] == ["--max"]:
        limit, argv = float(argv[1]), argv[2:]
    if not argv:
        sys.exit(__doc__)
    over = 0
    for path in argv:
        n, avg = average(path)
        flag = " over" if limit is not None and avg > limit else ""
        over += bool(flag)
        print(f"{path}: {n} sentences, {avg:.1f} words a sentence{flag}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
