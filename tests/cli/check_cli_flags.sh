#!/usr/bin/env bash
# One vocabulary of flags (ctest: CliFlagVocabulary): the old spellings still work, give the same
# output as the new ones and warn on stderr (the studies' old command names too, `wa-study` for
# `study wa`); every command that takes capacities reads the same
# units (blocks, %, tokens, GB through the cost model); the policy sets online/offline expand;
# compare ends with one recommendation line per capacity. Usage: check_cli_flags.sh KVPOLICY_BINARY
set -uo pipefail
K=${1:?usage: check_cli_flags.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
"$K" trace generate --kind zipf --params requests=300,prefixes=30 --out t.kvtrace > /dev/null || exit 1

# same_output "OLD ARGS" "NEW ARGS" OLD_FLAG NEW_FLAG: equal stdout, the deprecation warning only
# for the old spelling.
same_output() {
  local old=$1 new=$2 old_flag=$3 new_flag=$4
  # shellcheck disable=SC2086
  "$K" $old > old.out 2> old.err || { fail "kvpolicy $old -> exit $? ($(cat old.err))"; return; }
  # shellcheck disable=SC2086
  "$K" $new > new.out 2> new.err || { fail "kvpolicy $new -> exit $? ($(cat new.err))"; return; }
  # Timings differ from run to run; everything else must not.
  if ! diff <(grep -v ' s (seed\|ns/acc\|replay s' old.out) \
            <(grep -v ' s (seed\|ns/acc\|replay s' new.out) > /dev/null; then
    fail "kvpolicy $old and kvpolicy $new print different results"
  fi
  local warning="kvpolicy: $old_flag is deprecated; use $new_flag"
  grep -qF -- "$warning" old.err || fail "kvpolicy $old: no '$warning' on stderr"
  grep -q "deprecated" new.err && fail "kvpolicy $new warns: $(cat new.err)"
}

same_output "study robustness -t t.kvtrace -c 0.2 -n 0,1 --policies lru,laru" \
  "study robustness -t t.kvtrace -c 0.2 -n 0,1 --policy lru,laru" --policies --policy
same_output "study tail -t t.kvtrace --capacities 0.1 --xi 100" \
  "study tail -t t.kvtrace -c 0.1 --xi 100" --capacities --capacity
same_output "study wa -t t.kvtrace --hbm 0.1 --dram-ratios 0,1 -p lru,wa" \
  "study wa -t t.kvtrace -c 0.1 --dram-ratios 0,1 -p lru,wa" --hbm --capacity
same_output "study robustness -t t.kvtrace -c 0.1 -n 0 -p lru --infer-sessions" \
  "study robustness -t t.kvtrace -c 0.1 -n 0 -p lru --sessions infer" --infer-sessions \
  "--sessions infer"

# The studies' old top-level names, kept for one release: the same stdout and the same --json
# rows byte for byte (the fields that time the run removed), one notice on stderr naming the new
# spelling, and absent from --help.
without_timings() {
  local timed='replay_seconds|replay_cpu_seconds|ns_per_access|sim_seconds|predict_seconds'
  sed -E "s/\"($timed)\":[-+.0-9e]+//g" "$1"
}
same_study() {  # same_study OLD NEW ARGS...
  local old=$1 new=$2
  shift 2
  "$K" "$old" "$@" --json old.json > old.out 2> old.err ||
    { fail "kvpolicy $old $* -> exit $? ($(cat old.err))"; return; }
  "$K" study "$new" "$@" --json new.json > new.out 2> new.err ||
    { fail "kvpolicy study $new $* -> exit $? ($(cat new.err))"; return; }
  [[ -s new.json ]] || fail "kvpolicy study $new $*: no --json rows"
  cmp -s <(without_timings old.json) <(without_timings new.json) ||
    fail "kvpolicy $old and kvpolicy study $new write different --json rows"
  cmp -s old.out new.out || fail "kvpolicy $old and kvpolicy study $new print different results"
  local notice="kvpolicy: \`$old\` is now \`kvpolicy study $new\`"
  [[ $(grep -cF -- "$notice" old.err) == 1 ]] || fail "kvpolicy $old: not one '$notice' on stderr"
  grep -q "is now" new.err && fail "kvpolicy study $new prints a notice: $(cat new.err)"
  grep -q "^ *$old " <<< "$top_help" && fail "kvpolicy --help lists $old"
  grep -q "^  $new " <<< "$study_help" || fail "kvpolicy study --help does not list $new"
}
top_help=$("$K" --help)
study_help=$("$K" study --help)
same_study robustness robustness -t t.kvtrace -c 0.2 -n 0,1 -p lru,laru
same_study tail tail -t t.kvtrace -c 0.1 --xi 100
same_study wa-study wa -t t.kvtrace -c 0.1 --dram-ratios 0,1 -p lru,wa
# -j 1: lpc's replays at once write their rows as they finish.
same_study lpc-study lpc -t t.kvtrace -c 0.05,0.1 -p lru,belady --baseline lru --oracle belady -j 1
same_study route-study route --workloads gsp-random --gsp groups=4,prompts=10 --workers 2 -p lru \
  --router round_robin

# The same capacity units in every command that takes one.
for cmd in "simulate -p lru" "compare -p lru" "study tail --xi 100" \
  "study wa -p lru --dram-ratios 0" "study robustness -p lru -n 0" \
  "study lpc -p lru,belady --baseline lru --oracle belady" "serve -p lru"; do
  for cap in 40 5% 0.05 640t 0.01GB; do
    # shellcheck disable=SC2086
    "$K" $cmd -t t.kvtrace -c $cap > /dev/null 2> err.txt ||
      fail "kvpolicy $cmd -c $cap -> $(cat err.txt)"
  done
done

# Units are converted through the cost model: GB over the KV bytes of a block, fp8 halves them,
# tokens over the trace's block size.
blocks_of() {  # blocks_of ARGS...: capacity_blocks of simulate's one JSON row
  "$K" simulate -t t.kvtrace -p lru --json r.jsonl "$@" > /dev/null 2>&1 || { echo error; return; }
  python3 -c 'import json,sys; print(json.loads(open("r.jsonl").readline())["capacity_blocks"])'
}
gb_of() {
  python3 -c 'import json; print(json.loads(open("r.jsonl").readline())["capacity_gb"])'
}
b16=$(blocks_of -c 0.1GB)
gb16=$(gb_of)
b8=$(blocks_of -c 0.1GB --kv-dtype fp8)
python3 - "$b16" "$gb16" "$b8" <<'EOF' || fail "0.1GB: $b16 blocks ($gb16 GB), fp8 $b8 blocks"
import sys
b16, gb, b8 = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
per_block = gb / b16  # GB of one block
assert 0.1 - per_block < gb <= 0.1 + 1e-3, (b16, gb)  # as many whole blocks as fit
assert abs(b8 - 2 * b16) <= 1, (b16, b8)
EOF
tokens=$("$K" trace stats -t t.kvtrace 2> /dev/null | grep -o 'blocks of [0-9]* tokens' | grep -o '[0-9]*' | head -1)
bt=$(blocks_of -c 640t)
if [[ -z $tokens || $bt != $((640 / tokens)) ]]; then
  fail "640t with $tokens-token blocks gave $bt blocks"
fi

# Policy sets: online has no offline policy and compare puts them below the line.
"$K" compare -t t.kvtrace -p online -c 0.05,0.1 > online.out 2> err.txt || fail "compare -p online: $(cat err.txt)"
sed -n '/^deployable policies/,/^----/p' online.out > deployable.txt
grep -q '^belady' deployable.txt && fail "compare -p online lists belady among deployable policies"
grep -q '^lru' deployable.txt || fail "compare -p online: no lru among deployable policies"
grep -q '^s3fifo' deployable.txt || fail "compare -p online: s3fifo missing"
n=$(grep -c '^best deployable policy at ' online.out)
[[ $n == 2 ]] || fail "compare with two capacities printed $n recommendation lines"
"$K" compare -t t.kvtrace -p offline -c 0.1 > offline.out 2> err.txt || fail "compare -p offline: $(cat err.txt)"
sed -n '/^offline references/,/^infinite cache/p' offline.out | grep -q '^belady' ||
  fail "compare -p offline: belady not among the offline references"
sed -n '/^deployable policies/,/^----/p' offline.out | grep -v '^deployable\|^----' |
  grep -qv '^lru' && fail "compare -p offline: a deployable policy other than lru"

# --csv: one row per result, a parameter list with commas quoted, and a write error is an error.
"$K" simulate -t t.kvtrace -p "lru,laru:predictor=noisy,p=0.2" -c 0.1,0.2 --csv r.csv --json r.jsonl \
  > /dev/null 2>&1 || fail "simulate --csv"
python3 - r.csv r.jsonl <<'PY' || fail "simulate --csv rows differ from --json"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
js = [json.loads(l) for l in open(sys.argv[2])]
assert len(rows) == len(js) == 4, (len(rows), len(js))
for r, j in zip(sorted(rows, key=lambda r: (r["policy"], r["capacity_blocks"])),
                sorted(js, key=lambda j: (j["policy"], str(j["capacity_blocks"])))):
    assert r["params"] == j["params"] and int(r["capacity_blocks"]) == j["capacity_blocks"], (r, j)
    assert abs(float(r["block_hit_rate"]) - j["block_hit_rate"]) < 1e-6, (r, j)
    assert r["offline"] == ("1" if j["offline"] else "0"), (r, j)
PY
"$K" compare -t t.kvtrace -p lru -c 0.1 --csv c.csv > /dev/null 2>&1 || fail "compare --csv"
[[ $(wc -l < c.csv) == 3 ]] || fail "compare --csv: expected a header and lru, belady rows"
if "$K" simulate -t t.kvtrace -p lru -c 0.1 --csv /dev/full > /dev/null 2>&1; then
  fail "simulate --csv /dev/full succeeded"
fi

finish "flags, units and policy sets behave"
