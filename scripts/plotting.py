"""What gbasim's plot scripts share: Debian's matplotlib without a display, and figures
written whole (a temporary file renamed into place)."""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402,F401  (re-exported for the plot scripts)


def save_figure(fig, prefix):
    """Writes PREFIX.png and PREFIX.pdf, creating the folder. The PDF carries no creation
    date, so the same results give the same bytes."""
    os.makedirs(os.path.dirname(prefix) or ".", exist_ok=True)
    for ext in ("png", "pdf"):
        tmp = f"{prefix}.tmp.{ext}"
        fig.savefig(tmp, dpi=120, metadata={"CreationDate": None} if ext == "pdf" else None)
        os.replace(tmp, f"{prefix}.{ext}")
