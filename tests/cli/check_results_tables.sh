#!/usr/bin/env bash
# The machinery that keeps docs/results/ current (ctest: ResultsTablesRegenerate):
#  1. every generated block of docs/results/*.md is closed and names a section that
#     studies/rerun_results.sh knows, so --update can refill it; every link between the study
#     files resolves to a heading, and the index (README.md) lists every file and no other;
#  2. results_tables.py prints a run's hit rates with the deployable policies above the offline
#     references and the gap to Belady computed from the rows;
#  3. --splice fills a block from a section's output and leaves the rest of the pages alone;
#  4. bench_tables.py reads a one-workload bench (the README tour's) and a bad file gets one error.
# Usage: check_results_tables.sh KVPOLICY_BINARY
set -euo pipefail
K=${1:?usage: check_results_tables.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"

# 1. Markers, links and the index.
sections=$("$src/studies/rerun_results.sh" --list)
python3 - "$src/docs/results" $sections <<'EOF' || fail_now "docs/results/ markers and links"
import glob, os, re, sys
doc_dir, sections = sys.argv[1], sys.argv[2:]
pages = {os.path.basename(p): open(p).read() for p in glob.glob(os.path.join(doc_dir, "*.md"))}
assert "README.md" in pages, "docs/results/ has no index (README.md)"
listed = set(re.findall(r"^- \[([\w-]+\.md)\]\(\1\)", pages["README.md"], re.M))
assert listed == set(pages) - {"README.md"}, f"index lists {sorted(listed)}, files {sorted(pages)}"
# GitHub's anchors: lowercase, punctuation dropped, spaces to hyphens, a repeated heading gets -1,
# -2, ...; lines inside code fences are no headings.
def anchors(text):
    seen, out, fence = {}, set(), False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"#+ (.*)$", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            out.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
            seen[slug] = seen.get(slug, 0) + 1
    return out
heads = {name: anchors(text) for name, text in pages.items()}
blocks = 0
for name, text in pages.items():
    opened = re.findall(r"<!-- generated: ([\w-]+) -->", text)
    closed = re.findall(r"<!-- end generated: ([\w-]+) -->", text)
    assert opened == closed, f"{name}: unbalanced blocks: {opened} vs {closed}"
    for block in opened:
        assert any(block == s or block.startswith(s + "-") for s in sections), f"{name}: no section makes {block}"
    blocks += len(opened)
    for target, anchor in re.findall(r"\]\(([\w-]+\.md)?#([^)]+)\)", text):
        page = target or name
        if page in pages:
            assert anchor in heads[page], f"{name}: link to {page}#{anchor}: no such heading"
assert blocks, "no generated blocks"
EOF

# 2. A hit-rate table from a real run.
"$K" trace generate --kind zipf --params requests=2000,prefixes=200 --out z.kvtrace > /dev/null
"$K" simulate -t z.kvtrace -p lru,fifo,belady,fpb -c 0.05,0.1 --json z.jsonl > /dev/null
python3 "$src/studies/results_tables.py" hitrates z.jsonl --gap > z.md
python3 - z.jsonl z.md <<'EOF' || fail_now "results_tables.py hitrates"
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

# 3. Splice into a copy of the source tree's results pages: a block is filled in the file that
# holds it, and a file without blocks is left alone.
mkdir -p tree/studies tree/docs/results out/md
cp "$src/studies/rerun_results.sh" tree/studies/
printf 'intro\n<!-- generated: gsp -->\nold\n<!-- end generated: gsp -->\noutro\n' > tree/docs/results/replay.md
printf 'no blocks here\n' > tree/docs/results/other.md
echo "| new table |" > out/md/gsp.md
echo "gsp abc1234" > out/md/gsp.commit
K=$K T=$work bash tree/studies/rerun_results.sh --splice out 2> /dev/null
python3 - tree/docs/results/replay.md tree/docs/results/other.md <<'EOF' || fail_now "rerun_results.sh --splice"
import sys
text = open(sys.argv[1]).read()
assert text.startswith("intro\n<!-- generated: gsp -->\n"), text
assert "| new table |" in text and "old" not in text and "abc1234" in text, text
assert text.endswith("<!-- end generated: gsp -->\noutro\n"), text
assert open(sys.argv[2]).read() == "no blocks here\n"
EOF

# 4. bench_tables.py on a one-workload bench, and on a file that is not one.
"$K" bench --quick --policy lru,fifo --json b.json > /dev/null 2>&1
python3 "$src/studies/bench_tables.py" b.json --only memory > b.md
grep -q '^| \*\*lru\*\* |' b.md || fail_now "bench_tables.py on a one-workload bench"
echo '{}' > bad.json
if err=$(python3 "$src/studies/bench_tables.py" bad.json 2>&1); then fail_now "bench_tables.py accepted {}"; fi
[[ $err == *"bad.json"* && $err != *Traceback* ]] || fail_now "bench_tables.py error: $err"
echo "results tables: ok"
