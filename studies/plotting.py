"""The preamble every plot script of studies/ shares: matplotlib without a display (re-run under
the system's Python when this one lacks it), one style for axes, one way to save a figure.

    from plotting import plt, style, save
"""
import os
import sys

try:
    import matplotlib
except ImportError:
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)  # the system's has it
    sys.exit(f"{os.path.basename(sys.argv[0])} needs matplotlib: apt-get install "
             "python3-matplotlib (Debian), or pip install matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def style(ax):
    """The light grid every panel has."""
    ax.grid(alpha=0.3)


def save(fig, path, dpi=120):
    """Lays the figure out, writes it as PNG, frees it and prints the file's name."""
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    print(path)
