#!/usr/bin/env bash
# Nothing silently (ctest: CliNotes): a policy set on a trace without continuation scores leaves
# LPC out with one line in every command (it failed in simulate, and compare and mrc ran its
# offline oracle variant as if deployable); serve says which flags the combination ignores;
# compare says which rows coincide and does not open with a warning; mrc's table comes before
# --plot's file name; GB columns carry no exponent. Usage: check_cli_notes.sh KVPOLICY_BINARY
set -uo pipefail
K=${1:?usage: check_cli_notes.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
# Generated traces carry no continuation scores, as Mooncake's does not.
"$K" trace generate --kind zipf --params requests=300,prefixes=30 --out t.kvtrace > /dev/null ||
  exit 1

# -p online and -p all run on it in every command, LPC left out with one line on stderr.
for cmd in "simulate -c 0.1 --json r.jsonl" "mrc --points 2 --json r.jsonl" \
  "serve -c 10% --json r.jsonl" "study wa -c 0.05 --dram-ratios 0 --json r.jsonl" \
  "study lpc -c 0.05,0.1 --baseline lru --oracle belady --json r.jsonl"; do
  for set in online all; do
    # One set is enough for serve; study wa computes no oracle, so runs no offline policy.
    [[ ($cmd == serve* || $cmd == "study wa"*) && $set == all ]] && continue
    rm -f r.jsonl
    # shellcheck disable=SC2086
    "$K" $cmd -t t.kvtrace -p $set > out.txt 2> err.txt || {
      fail "kvpolicy $cmd -p $set -> $(tail -1 err.txt)"
      continue
    }
    n=$(grep -c 'skipped lpc.*continuation scores' err.txt)
    [[ $n == 1 ]] || fail "kvpolicy $cmd -p $set: $n lines saying LPC was skipped: $(cat err.txt)"
    grep -q '"policy":"lpc"' r.jsonl && fail "kvpolicy $cmd -p $set ran lpc"
    if [[ $set == online ]] && grep -q '"offline":true' r.jsonl; then
      fail "kvpolicy $cmd -p online ran an offline policy"
    fi
  done
done
"$K" simulate -t t.kvtrace -p lpc -c 0.1 > /dev/null 2> err.txt &&
  fail "simulate -p lpc on a trace without scores succeeded"
grep -q 'continuation scores' err.txt || fail "simulate -p lpc: $(cat err.txt)"
"$K" compare -t t.kvtrace -p lpc -c 0.1 > /dev/null 2> err.txt &&
  fail "compare -p lpc ran (its oracle variant) on a trace without scores"

# compare: no oracle variant among the rows, the note under the table, a deployable best.
"$K" compare -t t.kvtrace -p online -c 0.05,0.1 --json c.jsonl > c.out 2> err.txt ||
  fail "compare -p online: $(cat err.txt)"
grep -q 'predictor=oracle' c.out && fail "compare -p online ran an oracle variant"
grep -q 'skipped lpc' c.out || fail "compare -p online: no line saying LPC was skipped"
grep -q 'lpc' err.txt && fail "compare -p online warned on stderr: $(cat err.txt)"
sed -n '/^deployable policies/,/^----/p' c.out | awk '{print $1}' > deployable.txt
grep '^best deployable policy at' c.out | sed 's/.*: \([^ ,]*\).*/\1/' | while read -r best; do
  grep -qx "$best" deployable.txt || echo "$best"
done > not-deployable.txt
[[ -s not-deployable.txt ]] && fail "compare recommends $(cat not-deployable.txt), not deployable"

# compare's identical rows: the note names exactly the groups with the same hits everywhere.
"$K" compare -t t.kvtrace -c 0.05,0.2 --json all.jsonl > all.out 2> /dev/null ||
  fail "compare -p all exited $?"
python3 - all.jsonl all.out <<'EOF' || fail "compare's identical-rows note is wrong"
import json, sys
from collections import defaultdict
hits = defaultdict(dict)  # rows arrive as replays finish: keyed by capacity
for line in open(sys.argv[1]):
    r = json.loads(line)
    label = r["policy"] + (":" + r["params"] if r["params"] else "")
    hits[label][r["capacity_blocks"]] = r["block_hits"]
groups = defaultdict(list)
for label, h in hits.items():
    groups[tuple(sorted(h.items()))].append(label)
want = sorted(sorted(g) for g in groups.values() if len(g) > 1)
notes = [l for l in open(sys.argv[2]) if l.startswith("identical rows")]
if not want:
    assert not notes, notes
    sys.exit(0)
assert len(notes) == 1, notes
listed = notes[0].split(": ", 1)[1].split(" (their defaults")[0].strip()
got = sorted(sorted(g.split(" = ")) for g in listed.split("; "))
assert got == want, (got, want)
EOF

# make run: compare on the built-in workload opens with its table, not a warning.
"$K" compare -c 0.05 -p lru,lpc,s3fifo > run.out 2> run.err && fail "compare -p lpc on the built-in workload ran"
"$K" compare -c 0.05 > run.out 2> run.err || fail "compare (make run) exited $?"
grep -qi 'lpc\|continuation' run.err && fail "compare (make run) warned on stderr: $(cat run.err)"
head -1 run.out | grep -q '^workload: ' || fail "compare (make run) opens with: $(head -1 run.out)"

# serve says which flags do nothing in the combination given; a plain run says nothing.
serve_says() { # serve_says "ARGS" PATTERN
  # shellcheck disable=SC2086
  "$K" serve $1 -c 10% > /dev/null 2> err.txt || {
    fail "serve $1 -> $(tail -1 err.txt)"
    return
  }
  if [[ -z $2 ]]; then
    grep -q 'no effect' err.txt && fail "serve $1 warned: $(cat err.txt)"
  else
    grep -q -- "$2" err.txt || fail "serve $1: no '$2' on stderr ($(cat err.txt))"
  fi
}
serve_says "-t t.kvtrace" ""
serve_says "-t t.kvtrace --clients 4 --think-time 2" ""
serve_says "-t t.kvtrace --think-time 2" "--think-time has no effect without --clients"
serve_says "-t t.kvtrace --clients 4 --rate 3" "--rate has no effect with --clients"
serve_says "-t t.kvtrace --rate 3 --time-scale 2" "--time-scale has no effect with --rate"
serve_says "-t t.kvtrace --generate-seed 5" "--generate-seed has no effect with --trace"
serve_says "--generate zipf:requests=100 --block-tokens 32" "--block-tokens has no effect with --generate"

# GB columns in plain digits: 40 TB of KV is 40000 GB, not 4e+04.
"$K" simulate -t t.kvtrace -p lru -c 40TB > gb.out 2> /dev/null || fail "simulate -c 40TB exited $?"
grep -q 'e+0' gb.out && fail "simulate prints GB with an exponent: $(grep 'e+0' gb.out)"
grep -q ' 40000 ' gb.out || fail "simulate -c 40TB: no 40000 GB column: $(tail -1 gb.out)"

# mrc --plot: the table first, then the script's line with the PNG's name.
if /usr/bin/python3 -c "import matplotlib" 2> /dev/null; then
  "$K" mrc -t t.kvtrace -p lru --points 3 --plot p.png > plot.out 2> /dev/null ||
    fail "mrc --plot exited $?"
  [[ $(tail -1 plot.out) == p.png ]] || fail "mrc --plot: the PNG's name is not last: $(grep -n 'p.png' plot.out)"
fi

finish "policy sets skip LPC with one line, serve names ignored flags, compare notes identical rows"
