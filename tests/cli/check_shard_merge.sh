#!/usr/bin/env bash
# --shard i/n and `kvpolicy merge` (ctest: CliShardMerge): simulate and serve sweeps run as
# shards and merged equal one process's file row for row, in order (timing fields aside);
# merge refuses duplicates, conflicts, lines that are no result and torn lines, naming file and
# line, and writes nothing then; bad --shard values are refused. Usage: check_shard_merge.sh K
set -uo pipefail
K=${1:?usage: check_shard_merge.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
"$K" trace generate --kind conversation --params sessions=150 --out t.kvtrace > /dev/null || exit 1
SIM=(simulate -t t.kvtrace -p lru,fifo,s3fifo,belady -c 2%,5%,10% --seed 3)
"$K" "${SIM[@]}" -j 1 --json single.jsonl > single.txt 2>&1 || fail "single simulate: $(cat single.txt)"

# Two shards (each on two threads: rows stream in completion order, then the file is ordered).
for i in 0 1; do
  "$K" "${SIM[@]}" -j 2 --shard $i/2 --json s$i.jsonl > s$i.txt 2>&1 || fail "shard $i/2: $(cat s$i.txt)"
done
[[ -s s0.jsonl && -s s1.jsonl ]] || fail "a shard wrote no row"
"$K" merge merged.jsonl s0.jsonl s1.jsonl > merge.txt 2>&1 || fail "merge: $(cat merge.txt)"
grep -q "merged 12 rows from 2 file(s) into merged.jsonl" merge.txt || fail "merge summary: $(cat merge.txt)"
python3 "$same_results" single.jsonl merged.jsonl || fail "simulate: merged shards differ from one run"

# A shard resumes like a whole sweep: drop its last row, --resume runs only that one.
head -n -1 s1.jsonl > s1r.jsonl
"$K" "${SIM[@]}" --shard 1/2 --json s1r.jsonl --resume > r.txt 2>&1 || fail "shard resume: $(cat r.txt)"
python3 "$same_results" s1.jsonl s1r.jsonl || fail "resumed shard differs"

# Serve mode, three shards.
SERVE=(serve --generate conversation:sessions=60 -r round_robin,cache_aware -p lru,fifo
       -w 1,2 -c 5%,20% --seed 2)
"$K" "${SERVE[@]}" -j 1 --json serve.jsonl > serve.txt 2>&1 || fail "single serve: $(cat serve.txt)"
for i in 0 1 2; do
  "$K" "${SERVE[@]}" -j 2 --shard $i/3 --json v$i.jsonl > v$i.txt 2>&1 || fail "serve shard $i/3: $(cat v$i.txt)"
done
"$K" merge vmerged.jsonl v0.jsonl v1.jsonl v2.jsonl > /dev/null 2>&1 || fail "serve merge"
python3 "$same_results" serve.jsonl vmerged.jsonl || fail "serve: merged shards differ from one run"

# merge refuses bad input with one error naming file and line, and writes nothing.
refuses() {  # expected message, then merge's inputs
  local want=$1
  shift
  rm -f bad.jsonl
  if "$K" merge bad.jsonl "$@" > out.txt 2> err.txt; then
    fail "merge $* was accepted"
  elif ! grep -qF -- "$want" err.txt; then
    fail "merge $*: expected '$want', got: $(cat err.txt)"
  fi
  [[ ! -e bad.jsonl ]] || fail "merge $* left an output file"
}
refuses "s0.jsonl:1: duplicate row: the same result as s0.jsonl:1" s0.jsonl s0.jsonl
sed -n '2s/"block_hits":[0-9]*/"block_hits":1/p' s1.jsonl > conflict.jsonl
refuses "conflict.jsonl:1: conflicting rows: the same configuration as s1.jsonl:2" \
  s0.jsonl s1.jsonl conflict.jsonl
{ head -n 1 s1.jsonl; echo '{"kind":"note","text":"not a result"}'; } > note.jsonl
refuses "note.jsonl:2: field 'trace'" s0.jsonl note.jsonl
{ head -n 1 s1.jsonl; echo 'hello'; } > text.jsonl
refuses "text.jsonl:2" s0.jsonl text.jsonl
{ cat s1.jsonl; printf '{"trace":"t.kvtrace"'; } > torn.jsonl
refuses "torn.jsonl:7: the last line has no end" s0.jsonl torn.jsonl
refuses "absent.jsonl" s0.jsonl absent.jsonl
"$K" merge > /dev/null 2>&1 && fail "merge without files was accepted"

# Bad --shard values are refused before any work.
for bad in 2/2 1 x/2 1/0 -1/2 0/2/1; do
  if "$K" "${SIM[@]}" --shard "$bad" > out.txt 2> err.txt; then
    fail "--shard $bad was accepted"
  elif ! grep -q -- "--shard" err.txt; then
    fail "--shard $bad: no message naming --shard: $(cat err.txt)"
  fi
done

finish "shard and merge checks passed"
