"""plot_leaderboard.py's figure checked programmatically (not against a golden image): one row
per ranked policy, one column per (trace, capacity), each cell's number the margin over the best
seed policy as the board rows give it, a star on the wins, and figures.check_figure clean."""

import json
import os
import subprocess
import sys

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "kvpolicy"))
import figures  # noqa: E402
import plot_leaderboard  # noqa: E402

import kvpolicy  # noqa: E402
from test_kvpolicy import write_mooncake  # noqa: E402


@pytest.fixture(scope="module")
def rows_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("board")
    write_mooncake(d / "small.jsonl", requests=300, seed=5)
    board = kvpolicy.leaderboard([f"small={d / 'small.jsonl'}", "g=builtin:gsp"], ["5%", "20%"],
                                 "s3fifo,sieve", seeds="wa,rlt")
    path = d / "board.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in board["rows"]))
    return path, board["rows"]


def test_the_heat_map_is_the_board(rows_file):
    path, rows = rows_file
    fig = plot_leaderboard.figure(str(path))
    assert figures.check_figure(fig) == []
    ax = fig.axes[0]
    summary = [r["policy"] for r in rows if r["kind"] == "summary"]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert [label.split(" (")[0] for label in labels] == summary
    assert [t.get_text() for t in ax.get_xticklabels()] == \
        ["small\n5%", "small\n20%", "g\n5%", "g\n20%"]
    texts = {t.get_text() for t in ax.texts}
    for c in (r for r in rows if r["kind"] == "cell"):
        assert f"{c['margin_seed_pt']:+.1f}" + ("*" if c["win"] else "") in texts, c
    assert "margin over the best seed policy" in ax.get_title()


def test_the_script_writes_a_png(rows_file, tmp_path):
    out = tmp_path / "board.png"
    script = os.path.join(os.path.dirname(__file__), "..", "kvpolicy", "plot_leaderboard.py")
    subprocess.run([sys.executable, script, str(rows_file[0]), str(out)], check=True)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
