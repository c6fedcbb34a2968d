"""Every figure kvpolicy draws passes figures.check_figure (titles that say what is measured, axes
labelled, nothing clipped, legends off the data, latency axes without a forced zero), and the
check itself catches each of those faults. The plot scripts refuse to save a figure that fails
it, so running them on real output is the test."""
import json
import os
import subprocess
import sys

import pytest

from kvpolicy import figures, plot_mrc

SRC = os.environ.get("KVPOLICY_SOURCE_DIR",
                     os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BINARY = os.environ.get("KVPOLICY_BINARY", "")
plt = figures.plt


def run(*args, cwd):
    return subprocess.run(list(args), cwd=cwd, check=True, capture_output=True, text=True)


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    if not BINARY:
        pytest.skip("KVPOLICY_BINARY is not set (ctest sets it)")
    d = tmp_path_factory.mktemp("figures")
    run(BINARY, "trace", "generate", "--kind", "conversation", "--params", "sessions=300",
        "--out", "t.kvtrace", cwd=d)
    return d


def good_figure():
    fig, ax = plt.subplots()
    xs = list(range(1, 41))
    ax.plot(xs, [10 + x / 4 for x in xs], **figures.offline_style("lru"))
    ax.plot(xs, [12 + x / 3 for x in xs], **figures.offline_style("belady"))
    ax.set_xlabel("capacity (GB)")
    figures.latency_axis(ax, "mean TTFT (ms)")
    ax.set_title("TTFT vs capacity")
    figures.legend_beside(ax)
    fig.tight_layout()
    return fig, ax


def test_a_good_figure_passes():
    fig, ax = good_figure()
    assert figures.check_figure(fig) == []
    assert ax.get_lines()[1].get_linestyle() == "--"  # the offline reference is dashed
    assert ax.get_lines()[1].get_label() == "belady (offline reference)"
    plt.close(fig)


@pytest.mark.parametrize("fault, words", [
    (lambda fig, ax: ax.set_title(""), "no title"),
    (lambda fig, ax: ax.set_xlabel(""), "no label"),
    (lambda fig, ax: ax.set_ylim(11, 14), "outside the axes"),
    (lambda fig, ax: ax.legend(loc="center"), "legend covers"),
    (lambda fig, ax: ax.set_ylim(0, 26), "starts at zero"),
    (lambda fig, ax: fig.suptitle("x" * 400), "wider than the figure"),
])
def test_the_check_catches_each_fault(fault, words):
    fig, ax = good_figure()
    fault(fig, ax)
    problems = figures.check_figure(fig)
    assert any(words in p for p in problems), problems
    plt.close(fig)


def test_offline_comes_from_the_row_when_it_says():
    assert figures.is_offline_label("lru", {"offline": True})
    assert not figures.is_offline_label("belady", {"offline": False})
    assert figures.is_offline_label("laru:predictor=oracle")
    assert not figures.is_offline_label("laru:predictor=reuse")


def test_mrc_figure(trace):
    run(BINARY, "mrc", "-t", "t.kvtrace", "-p", "lru,s3fifo,belady", "--points", "8",
        "--target-hit", "10%", "--json", "mrc.jsonl", cwd=trace)
    fig = plot_mrc.figure(str(trace / "mrc.jsonl"))
    assert figures.check_figure(fig) == []
    title = fig._suptitle.get_text()
    assert "hit rate" in title and "conversation(sessions=300" in title, title
    styles = {line.get_label(): line.get_linestyle() for line in fig.axes[0].get_lines()}
    assert styles["belady (offline reference)"] == "--" and styles["lru"] == "-", styles
    plt.close(fig)
    # As the command line runs it: a script, with figures.py beside it.
    run(BINARY, "mrc", "-t", "t.kvtrace", "-p", "lru", "--points", "4", "--plot", "mrc.png",
        cwd=trace)
    assert (trace / "mrc.png").stat().st_size > 10000


def test_study_figures(trace):
    py = sys.executable
    studies = os.path.join(SRC, "studies")
    run(BINARY, "trace", "stats", "--deep", "-t", "t.kvtrace", "--json", "c.json", cwd=trace)
    run(BINARY, "study", "wa", "-t", "t.kvtrace", "-c", "5%", "--json", "wa.jsonl",
        cwd=trace)
    out = run(py, os.path.join(studies, "plot_characterization.py"), "--json", "c.json",
              "--study", "wa.jsonl", "--out-dir", ".", "--prefix", "t", cwd=trace).stdout
    assert "t-wa-study.png" in out and "t-overview.png" in out, out
    # The LPC and embedding figures from rows of their commands' shape.
    rows = [{"trace": "generated:t.kvtrace", "policy": p, "params": params, "offline": off,
             "capacity_fraction": c, "block_hit_rate": h + c}
            for p, params, off, h in (("lru", "", False, 0.1), ("belady", "", True, 0.3))
            for c in (0.02, 0.05, 0.1)]
    (trace / "lpc.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run(py, os.path.join(studies, "plot_lpc_study.py"), "lpc.jsonl", "lpc.png", cwd=trace)
    rows = [{"cache_ratio": r, "policy": p, "batch": b, "mean_latency_ms": 5 + m * b + r}
            for r in (0.01, 0.1) for p, m in (("lru", 0.02), ("lcr", 0.01)) for b in (1, 8, 64)]
    (trace / "embed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run(py, os.path.join(studies, "plot_embed.py"), "embed.jsonl", "embed.png", "SLS latency",
        cwd=trace)
