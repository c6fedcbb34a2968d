#!/usr/bin/env bash
# The machinery that keeps docs/results.md current (ctest: ResultsTablesRegenerate):
#  1. every generated block of docs/results.md is closed and names a section that
#     scripts/rerun_results.sh knows, so --update can refill it; every in-page link resolves;
#  2. results_tables.py prints a run's hit rates with the deployable policies above the offline
#     references and the gap to Belady computed from the rows;
#  3. --splice fills a block from a section's output and leaves the rest of the page alone;
#  4. bench_tables.py reads a one-workload bench (the README tour's) and a bad file gets one error.
# Usage: check_results_tables.sh KVPOLICY_BINARY
set -euo pipefail
K=${1:?usage: check_results_tables.sh KVPOLICY_BINARY}
[[ $K = /* ]] || K=$PWD/$K
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }

# 1. Markers.
sections=$("$src/scripts/rerun_results.sh" --list)
python3 - "$src/docs/results.md" $sections <<'EOF' || fail "docs/results.md markers"
import re, sys
text, sections = open(sys.argv[1]).read(), sys.argv[2:]
opened = re.findall(r"<!-- generated: ([\w-]+) -->", text)
closed = re.findall(r"<!-- end generated: ([\w-]+) -->", text)
assert opened, "no generated blocks"
assert opened == closed, f"unbalanced blocks: {opened} vs {closed}"
for name in opened:
    assert any(name == s or name.startswith(s + "-") for s in sections), f"no section makes {name}"
# In-page links resolve to a heading (GitHub's anchors: lowercase, punctuation dropped, spaces
# to hyphens, a repeated heading gets -1, -2, ...).
seen, anchors = {}, set()
for h in re.findall(r"^#+ (.*)$", text, re.M):
    slug = re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
    anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
    seen[slug] = seen.get(slug, 0) + 1
broken = sorted(set(re.findall(r"\]\(#([^)]+)\)", text)) - anchors)
assert not broken, f"links to no heading: {broken}"
EOF

# 2. A hit-rate table from a real run.
cd "$work"
"$K" trace generate --kind zipf --params requests=2000,prefixes=200 --out z.kvtrace > /dev/null
"$K" simulate -t z.kvtrace -p lru,fifo,belady,fpb -c 0.05,0.1 --json z.jsonl > /dev/null
python3 "$src/scripts/results_tables.py" hitrates z.jsonl --gap > z.md
python3 - z.jsonl z.md <<'EOF' || fail "results_tables.py hitrates"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
md = open(sys.argv[2]).read().splitlines()
names = [l.split("|")[1].strip() for l in md[2:]]
off = names.index("*offline references (read the trace's future)*")
assert set(names[:off]) == {"fifo", "**lru**"}, names
assert names[off + 1:] == ["fpb", "**belady**", "infinite cache"], names
rate = {(r["policy"], r["capacity_blocks"]): r["block_hit_rate"] for r in rows}
caps = sorted({c for _, c in rate})
fifo = next(l for l in md if l.startswith("| fifo |")).split("|")
for i, c in enumerate(caps):
    assert fifo[2 + i].strip() == f"{rate[('fifo', c)] * 100:.2f}", fifo
    lru, opt = rate[("lru", c)], rate[("belady", c)]
    gap = (rate[("fifo", c)] - lru) / (opt - lru) * 100
    shown = fifo[2 + len(caps)].split("/")[i].strip().replace("−", "-")
    assert abs(float(shown) - gap) < 0.051, (shown, gap)
EOF

# 3. Splice into a copy of the source tree's results page.
mkdir -p tree/scripts tree/docs out/md
cp "$src/scripts/rerun_results.sh" tree/scripts/
printf 'intro\n<!-- generated: gsp -->\nold\n<!-- end generated: gsp -->\noutro\n' > tree/docs/results.md
echo "| new table |" > out/md/gsp.md
echo "gsp abc1234" > out/md/gsp.commit
K=$K T=$work bash tree/scripts/rerun_results.sh --splice out 2> /dev/null
python3 - tree/docs/results.md <<'EOF' || fail "rerun_results.sh --splice"
import sys
text = open(sys.argv[1]).read()
assert text.startswith("intro\n<!-- generated: gsp -->\n"), text
assert "| new table |" in text and "old" not in text and "abc1234" in text, text
assert text.endswith("<!-- end generated: gsp -->\noutro\n"), text
EOF

# 4. bench_tables.py on a one-workload bench, and on a file that is not one.
"$K" bench --quick --policy lru,fifo --json b.json > /dev/null 2>&1
python3 "$src/scripts/bench_tables.py" b.json --only memory > b.md
grep -q '^| \*\*lru\*\* |' b.md || fail "bench_tables.py on a one-workload bench"
echo '{}' > bad.json
if err=$(python3 "$src/scripts/bench_tables.py" bad.json 2>&1); then fail "bench_tables.py accepted {}"; fi
[[ $err == *"bad.json"* && $err != *Traceback* ]] || fail "bench_tables.py error: $err"
echo "results tables: ok"
