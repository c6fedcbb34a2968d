#!/usr/bin/env bash
# `kvpolicy leaderboard` end to end on two small generated traces and the built-in gsp workload
# (ctest: CliLeaderboard): the tables and the summary sentence, the replay rows streamed to
# --json and the board rows to --board-json (margins = the replay rows' differences), --resume
# running nothing again, bad --traces items refused naming the item with no file written, and
# --plot. Usage: check_leaderboard_cli.sh KVPOLICY_BINARY
set -uo pipefail
K=${1:?usage: check_leaderboard_cli.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
"$K" trace generate --kind conversation --params sessions=80,max_active=20 --seed 2 \
  --out a.kvtrace > /dev/null || exit 1
"$K" trace generate --kind conversation --params sessions=80,max_active=30 --seed 3 \
  --out b.kvtrace > /dev/null || exit 1
args=(leaderboard --traces "one=a.kvtrace,two=b.kvtrace@native,g=builtin:gsp" -c 2%,5%,10%,20%
  -p s3fifo,sieve --seeds wa,rlt,lpc -j 2)
"$K" "${args[@]}" --json r.jsonl --board-json b.jsonl > out.txt 2> err.txt ||
  fail "leaderboard exited $?: $(cat err.txt)"
grep -q "^summary: a trace counts for a policy" out.txt || fail "no summary table"
grep -Eq '^s3fifo: beats LRU and every seed policy at >= 3 of 4 sizes on [0-3] of 3 traces; ' \
  out.txt || fail "no s3fifo statement: $(cat out.txt)"
grep -q "seed policies skipped: lpc" out.txt || fail "lpc not said to be skipped"
grep -q "^belady (offline)" out.txt || fail "no Belady reference line"
# 3 traces x 6 policies (lru, s3fifo, sieve, wa, rlt, belady) x 4 sizes replay rows.
[[ $(wc -l < r.jsonl) -eq 72 ]] || fail "expected 72 replay rows, got $(wc -l < r.jsonl)"
python3 - r.jsonl b.jsonl << 'PY' || fail "board rows inconsistent with the replay rows"
import json, sys
replays = [json.loads(l) for l in open(sys.argv[1])]
board = [json.loads(l) for l in open(sys.argv[2])]
hit = {(r["trace"], r["policy"] + (":" + r["params"] if r["params"] else ""),
        r["capacity_blocks"]): r["block_hit_rate"] for r in replays}
cells = [r for r in board if r["kind"] == "cell"]
assert len(cells) == 3 * 5 * 4, len(cells)  # belady is not ranked
for c in cells:
    h = hit[(c["trace"], c["policy"], c["capacity_blocks"])]
    lru = hit[(c["trace"], "lru", c["capacity_blocks"])]
    assert abs(c["margin_lru_pt"] - (h - lru) * 100) < 1e-3, c
    seeds = [hit[(c["trace"], s, c["capacity_blocks"])] for s in ("wa", "rlt") if s != c["policy"]]
    assert abs(c["margin_seed_pt"] - (h - max(seeds)) * 100) < 1e-3, c
    if c["policy"] == "lru":
        assert not c["win"] and c["margin_lru_pt"] == 0, c
summary = [r for r in board if r["kind"] == "summary"]
assert len(summary) == 5 and all(s["traces"] == 3 for s in summary), summary
won = [s["traces_won"] for s in summary]
assert won == sorted(won, reverse=True), won
assert len([r for r in board if r["kind"] == "trace"]) == 15
PY
# --resume: every row is there, nothing runs again, the same board; --csv holds the same replays.
"$K" "${args[@]}" --json r.jsonl --resume --board-json b2.jsonl --csv r.csv > out2.txt 2> err2.txt ||
  fail "--resume exited $?: $(cat err2.txt)"
[[ $(wc -l < r.jsonl) -eq 72 ]] || fail "--resume added rows: $(wc -l < r.jsonl)"
cmp -s b.jsonl b2.jsonl || fail "--resume gave another board"
python3 - r.jsonl r.csv << 'PY' || fail "--csv rows differ from the replay rows"
import csv, json, sys
replays = {(r["trace"], r["policy"], r["params"], r["capacity_blocks"]): r["block_hit_rate"]
           for r in map(json.loads, open(sys.argv[1]))}
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == 72, len(rows)
for r in rows:
    h = replays[(r["trace"], r["policy"], r["params"], int(r["capacity_blocks"]))]
    assert abs(float(r["block_hit_rate"]) - h) < 1e-6, r
PY
# Half the rows lost: --resume runs those again and gives the same board.
head -30 r.jsonl > r3.jsonl
"$K" "${args[@]}" --json r3.jsonl --resume --board-json b3.jsonl > /dev/null 2>&1 ||
  fail "--resume on half the rows exited $?"
[[ $(wc -l < r3.jsonl) -eq 72 ]] || fail "--resume did not complete the rows"
cmp -s b.jsonl b3.jsonl || fail "--resume on half the rows gave another board"
# Bad inputs: one error naming the argument, and no file written.
bad() {  # bad NEEDLE TRACES
  local needle=$1 traces=$2
  rm -f x.jsonl xb.jsonl
  expect_error "$needle" leaderboard --traces "$traces" -c 5% --json x.jsonl --board-json xb.jsonl \
    --csv x.csv
  [[ ! -e x.jsonl && ! -e xb.jsonl && ! -e x.csv ]] || fail "--traces '$traces' wrote a file"
}
bad "no such file 'nope.jsonl'" "one=a.kvtrace,nope.jsonl"
bad "bad label 'a b'" "a b=a.kvtrace"
bad "the label 'x' is given twice" "x=a.kvtrace,x=b.kvtrace"
bad "the label 'a' is given twice" "a.kvtrace,a=b.kvtrace"
bad "--traces: the list is empty" ","
bad "an empty item" "a.kvtrace,,b.kvtrace"
bad "no built-in workload 'nope'" "builtin:nope"
bad "--traces item 'one'" "one=a.kvtrace@mooncake"
cp a.kvtrace keep.kvtrace
expect_error "the output 'a.kvtrace' (--board-json) is the trace 'a.kvtrace' of --traces item 'one'" \
  leaderboard --traces one=a.kvtrace -c 5% --board-json a.kvtrace
expect_error "(--json) is the trace" leaderboard --traces one=a.kvtrace -c 5% --json ./a.kvtrace
cmp -s a.kvtrace keep.kvtrace || fail "an input trace was written over"
expect_error "--traces is required" leaderboard -c 5%
expect_error "--seeds 'wa,lpc:predictor=oracle'" leaderboard --traces a.kvtrace \
  --seeds wa,lpc:predictor=oracle
expect_error "--policy 'lru,laru:predictor=oracle'" leaderboard --traces a.kvtrace \
  -p lru,laru:predictor=oracle
expect_error "--resume needs --json" leaderboard --traces a.kvtrace --resume
expect_error "--min-margin" leaderboard --traces a.kvtrace --min-margin -1
no_temporaries "leaderboard"
if /usr/bin/python3 -c "import matplotlib" 2> /dev/null; then
  "$K" leaderboard --traces one=a.kvtrace,two=b.kvtrace -c 5%,20% -p s3fifo --seeds wa \
    --plot p.png > /dev/null 2> plot-err.txt || fail "--plot exited $?: $(cat plot-err.txt)"
  [[ -s p.png ]] || fail "--plot wrote no PNG"
fi
finish "leaderboard: tables, summary, replay and board rows, --resume, bad --traces, --plot"
