"""What every kvpolicy figure does the same way, and a check that it did: matplotlib without a
display, offline references drawn apart (dashed), legends beside the data rather than over it,
latency axes that show the differences, and nothing clipped when saved.

    from kvpolicy.figures import plt, offline_style, legend_beside, save, check_figure

plot_mrc.py, the `size` plot and the scripts of studies/ import it (as a module beside them when
run as scripts). check_figure() returns the problems a reader would see; tests run every plot
through it, since a golden image would only say that pixels moved.
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

# Offline references (they read the trace's future) are dashed; deployable policies are solid.
OFFLINE_DASHES = (0, (5, 3))


def is_offline_label(label, row=None):
    """Whether a curve is an offline reference: the row's `offline` field when it has one, else
    the policy names that read the future (belady, or any oracle/noisy predictor)."""
    if row is not None and "offline" in row:
        return bool(row["offline"])
    name = label.split(":", 1)[0]
    return name == "belady" or "oracle" in label or "noisy" in label


def offline_style(label, row=None):
    """Line keyword arguments for a curve: dashed, and named as a reference, when offline."""
    if is_offline_label(label, row):
        return {"linestyle": OFFLINE_DASHES, "label": f"{label} (offline reference)"}
    return {"label": label}


def legend_beside(ax, **kwargs):
    """The legend to the right of the axes, outside them: it can never cover data."""
    kwargs.setdefault("fontsize", 8)
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, **kwargs)


def latency_axis(ax, label):
    """A TTFT or latency axis: labelled, its range from the data (no forced zero), so that the
    differences between policies show."""
    ax.set_ylabel(label)
    ax.margins(y=0.08)


def trace_name(trace):
    """A built trace is named "source:path"; the file name is enough."""
    source, _, path = trace.partition(":")
    return f"{source} ({path.rsplit('/', 1)[-1]})" if path else trace.rsplit("/", 1)[-1]


def gb_text(gb):
    """KV memory as a tick or a label reads it: "1,516", "65", "0.254" (never an exponent)."""
    return f"{gb:,.0f}" if gb >= 10 else f"{gb:.3g}"


def gb_axis(ax, label, values):
    """An x axis of KV memory in GB: logarithmic when the values span more than 20x, its ticks
    written as numbers ("1,000", not 10^3)."""
    from matplotlib.ticker import FuncFormatter
    ax.set_xlabel(label)
    if max(values) > 20 * min(values):
        ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: gb_text(v)))


def style(ax):
    """The light grid every panel has."""
    ax.grid(alpha=0.3)


def save(fig, path, dpi=120, layout=True):
    """Lays the figure out (unless the caller did: layout=False), checks it, writes it with
    everything it draws inside the image (titles and legends beside the axes included), frees it
    and prints the file's name."""
    if layout:
        fig.tight_layout()
    problems = check_figure(fig)
    if problems:
        sys.exit(f"{os.path.basename(sys.argv[0])}: {path}: " + "; ".join(problems))
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    print(path)


def _data_axes(fig):
    return [ax for ax in fig.axes if ax.has_data()]


def _points(ax):
    """Every plotted point of the axes in display coordinates."""
    import numpy as np
    out = []
    for line in ax.get_lines():
        xy = np.column_stack([line.get_xdata(orig=False), line.get_ydata(orig=False)])
        if len(xy):  # through the line's own transform: axhline's x is in axes coordinates
            out.append(line.get_transform().transform(xy.astype(float)))
    for coll in ax.collections:
        offsets = coll.get_offsets()
        if len(offsets):
            out.append(coll.get_offset_transform().transform(np.asarray(offsets, dtype=float)))
    return np.concatenate(out) if out else np.zeros((0, 2))


def check_figure(fig):
    """The problems a reader would see, as sentences (empty when none): a panel without axis
    labels, a figure whose title does not say what it measures, data outside its axes (clipped),
    a legend over data, a latency axis forced to start at zero, a title wider than the figure."""
    import numpy as np
    problems = []
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    titles = [fig._suptitle.get_text() if fig._suptitle else ""]
    titles += [ax.get_title() for ax in fig.axes]
    if not any(t.strip() for t in titles):
        problems.append("no title says what the figure measures")
    fig_box = fig.bbox
    for text in [fig._suptitle] if fig._suptitle else []:
        box = text.get_window_extent(renderer)
        if box.x0 < fig_box.x0 - 1 or box.x1 > fig_box.x1 + 1:
            problems.append(f"the title '{text.get_text()[:40]}...' is wider than the figure")
    for ax in _data_axes(fig):
        name = ax.get_title() or ax.get_ylabel() or "a panel"
        # A twin axes (twinx) shares its x axis, and its label, with its sibling.
        xlabels = [a.get_xlabel() for a in ax.get_shared_x_axes().get_siblings(ax)]
        if not any(x.strip() for x in xlabels) or not ax.get_ylabel().strip():
            problems.append(f"{name}: an axis has no label")
        pts = _points(ax)
        finite = pts[np.all(np.isfinite(pts), axis=1)] if len(pts) else pts
        box = ax.get_window_extent(renderer)
        if len(finite):
            outside = ((finite[:, 0] < box.x0 - 0.5) | (finite[:, 0] > box.x1 + 0.5) |
                       (finite[:, 1] < box.y0 - 0.5) | (finite[:, 1] > box.y1 + 0.5))
            if outside.any():
                problems.append(f"{name}: {int(outside.sum())} data points lie outside the axes "
                                "(clipped)")
        for other in fig.axes:
            legend = other.get_legend()
            if legend is None or not len(finite):
                continue
            lbox = legend.get_window_extent(renderer)
            inside = ((finite[:, 0] >= lbox.x0) & (finite[:, 0] <= lbox.x1) &
                      (finite[:, 1] >= lbox.y0) & (finite[:, 1] <= lbox.y1))
            if inside.any():
                problems.append(f"{name}: the legend covers {int(inside.sum())} data points")
        label = ax.get_ylabel().lower()
        if ("ttft" in label or "latency" in label) and ax.get_yscale() == "linear":
            ys = np.concatenate([np.asarray(line.get_ydata(), dtype=float)
                                 for line in ax.get_lines()] or [np.zeros(0)])
            ys = ys[np.isfinite(ys)]
            bottom, top = ax.get_ylim()
            if len(ys) and bottom <= 0 < ys.min() and ys.min() > 0.25 * (top - bottom):
                problems.append(f"{name}: the latency axis starts at zero, far below the data "
                                f"(lowest {ys.min():.3g}), hiding the differences")
    return problems
