"""plot_size.py's figure checked programmatically (not against a golden image): the title says
what is measured, the axes are labelled, the target and the GPU's KV memory are drawn and
labelled, one curve per worker count, and the legends sit outside the panels."""

import json
import os
import subprocess
import sys

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "kvpolicy"))
import plot_size  # noqa: E402

import kvpolicy  # noqa: E402
from test_kvpolicy import write_mooncake  # noqa: E402


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    path = tmp_path_factory.mktemp("plot") / "small.jsonl"
    write_mooncake(path, requests=300, seed=5)
    return kvpolicy.size(str(path), gpu="h100", workers=[1, 2], router="round_robin",
                         target_hit="20%", slo_ttft_p90_ms=5000, rate=2)


def test_the_figure_says_what_it_measures(rows):
    probes = [r for r in rows if r["kind"] == "probe"]
    fig = plot_size.figure(rows, probes)
    title = fig._suptitle.get_text()
    for words in ("small.jsonl", "llama-3.1-8b@h100", "router round_robin", "policy lru",
                  "block hit >= 20 %", "TTFT P90 <= 5000 ms", "serve mode"):
        assert words in title, title
    hit_ax, ttft_ax = fig.axes
    assert hit_ax.get_xlabel() == ttft_ax.get_xlabel() == "KV memory per replica (GB)"
    assert hit_ax.get_ylabel() == "hit rate (%)"
    assert ttft_ax.get_ylabel() == "serve-mode TTFT (ms)"
    hit_labels = [t.get_text() for t in hit_ax.get_legend().get_texts()]
    ttft_labels = [t.get_text() for t in ttft_ax.get_legend().get_texts()]
    for w in (1, 2):
        assert f"{w} workers: block hits" in hit_labels and f"{w} workers: token hits" in hit_labels
        assert f"{w} workers: TTFT P90" in ttft_labels
    assert "target: 20 % block hits" in hit_labels
    assert "SLO: TTFT P90 <= 5000 ms" in ttft_labels
    gpu = [label for label in hit_labels if label.startswith("KV memory of 1 x h100: ")]
    assert gpu and gpu == [label for label in ttft_labels if label.startswith("KV memory")]
    # The horizontal and vertical lines are where the rows put them.
    ys = [line.get_ydata()[0] for line in hit_ax.get_lines() if line.get_label().startswith("target")]
    assert ys == [20]
    xs = [line.get_xdata()[0] for line in hit_ax.get_lines()
          if line.get_label().startswith("KV memory")]
    assert xs == [pytest.approx(rows[0]["gpu_kv_gb"])]
    # Labelled in place too, and every text inside the figure (nothing clipped).
    texts = [t.get_text() for t in hit_ax.texts]
    assert "target: 20 % block hits" in texts and gpu[0] in texts
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in (hit_ax, ttft_ax):
        legend = ax.get_legend().get_window_extent(renderer)
        panel = ax.get_window_extent(renderer)
        xlabel = ax.xaxis.label.get_window_extent(renderer)
        assert legend.y1 <= panel.y0, "a legend over the curves"
        assert legend.y1 <= xlabel.y0 + 1, "a legend over the axis label"


def test_the_script_writes_a_png(rows, tmp_path):
    src = tmp_path / "size.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "size.png"
    script = os.path.join(os.path.dirname(__file__), "..", "kvpolicy", "plot_size.py")
    subprocess.run([sys.executable, script, str(src), str(out)], check=True)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
