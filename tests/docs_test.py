#!/usr/bin/python3
"""The guides read as guides (STYLE.md): README.md, docs/*.md, bench/README.md and
results/README.md average at most 30 words a sentence (scripts/sentence_length.py) and hold no
dates (dated measurements go to the folders under results/); bench/README.md stays under 200
lines. A planted page of long sentences and a date must fail first.

Usage: docs_test.py REPOSITORY_ROOT"""
import glob
import os
import re
import sys
import tempfile

ROOT = sys.argv[1] if len(sys.argv) == 2 else sys.exit(__doc__)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from sentence_length import average  # noqa: E402

DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")


def problems(pages, undated):
    found = []
    for page in pages:
        n, words = average(page)
        if words > 30:
            found.append(f"{page}: {words:.1f} words a sentence (at most 30)")
    for page in undated:
        with open(page, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if DATE.search(line):
                    found.append(f"{page}:{number}: a date in a guide: {line.strip()[:80]}")
    return found


with tempfile.TemporaryDirectory() as scratch:
    planted = os.path.join(scratch, "planted.md")
    with open(planted, "w", encoding="utf-8") as f:
        f.write("On 2026-01-01 " + " ".join(["word"] * 40) + ". " + " ".join(["More"] * 40) + ".\n")
    if len(problems([planted], [planted])) != 2:
        sys.exit("FAIL: a planted page of 40-word sentences and a date was not caught")

guides = [os.path.join(ROOT, p) for p in ("README.md", "bench/README.md", "results/README.md")]
guides += sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
found = problems(guides, guides)
with open(os.path.join(ROOT, "bench", "README.md"), encoding="utf-8") as f:
    lines = sum(1 for _ in f)
if lines > 200:
    found.append(f"bench/README.md: {lines} lines (at most 200)")
for p in found:
    print("FAIL:", p)
print(f"docs_test.py: {len(guides)} pages, {len(found)} problems")
sys.exit(1 if found else 0)
