"""What the scripts write: a file whole or not at all (a temporary file renamed into place), so
that an interrupted script leaves the earlier result, never half of a new one.

    from outputs import write_text
    write_text("results/x/table.md", table)
"""
import os


def write_text(path, text):
    """Writes `text` to `path` through `path`.tmp, creating the folder."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
