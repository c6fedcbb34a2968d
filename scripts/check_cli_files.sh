#!/usr/bin/env bash
# Nothing destroyed (issue 32): an output never lands on an input however either is spelt
# (ctest: CliFiles). Usage: check_cli_files.sh KVPOLICY_BINARY
set -uo pipefail
K=${1:?usage: check_cli_files.sh KVPOLICY_BINARY}
source "$(dirname "$0")/cli_checks.sh"
unchanged() {  # unchanged FILE SUM WHAT
  [[ $(cksum < "$1") == "$2" ]] || fail "$3 changed $1"
}
"$K" trace generate --kind zipf --params requests=2000,prefixes=50 --out t.kvtrace > /dev/null || exit 1
sum=$(cksum < t.kvtrace)
cp t.kvtrace pristine.kvtrace
mkdir sub
ln t.kvtrace hard.kvtrace
ln -s t.kvtrace link.kvtrace

# --- An output onto an input: refused for every command and spelling, the input as it was ---
SIM=(simulate -p lru -c 5%)
onto_trace() {  # onto_trace ARGS...: refused, and the trace (t.kvtrace) as it was
  expect_error "is the input" "$@"
  unchanged t.kvtrace "$sum" "kvpolicy $*"
  cat pristine.kvtrace > t.kvtrace  # in place: the links stay links to it
}
onto_trace "${SIM[@]}" -tt.kvtrace --json t.kvtrace
onto_trace "${SIM[@]}" -t t.kvtrace --json sub/../t.kvtrace
onto_trace "${SIM[@]}" -thard.kvtrace --json t.kvtrace
onto_trace "${SIM[@]}" -tlink.kvtrace --csv ./t.kvtrace
onto_trace compare -tt.kvtrace -p lru -c 5% --json ./hard.kvtrace
onto_trace mrc -tt.kvtrace -p lru --plot t.kvtrace
onto_trace serve -tt.kvtrace -p lru --json t.kvtrace
onto_trace lpc-study -tt.kvtrace -p lru,belady -c 5% --json t.kvtrace
onto_trace trace stats -tlink.kvtrace --json ./hard.kvtrace
onto_trace trace convert -tt.kvtrace --to native -o sub/../t.kvtrace
printf 'id,ts,prompt\n1,0,hello\n' > log.kvtrace
logsum=$(cksum < log.kvtrace)
expect_error "is the input" trace import --format csv -ilog.kvtrace -o log.kvtrace \
  --map time=ts,text=prompt
unchanged log.kvtrace "$logsum" "trace import -iX -o X"
printf '{"id":"a","conversations":[{"from":"human","value":"hi"}]}\n' > sg.jsonl
echo "a model" > model.jsonl
msum=$(cksum < model.jsonl)
expect_error "is the input" trace build --source sharegpt -i sg.jsonl --classifier model.jsonl \
  -o model.jsonl
unchanged model.jsonl "$msum" "trace build --classifier M -o M"
echo "statistics" > stats.txt
ssum=$(cksum < stats.txt)
expect_error "is the input" embed generate --stats stats.txt --out ./stats.txt
unchanged stats.txt "$ssum" "embed generate --stats F --out F"
"$K" "${SIM[@]}" -t t.kvtrace --shard 0/2 --json s0.jsonl > /dev/null 2>&1 || fail "shard 0"
"$K" "${SIM[@]}" -t t.kvtrace --shard 1/2 --json s1.jsonl > /dev/null 2>&1 || fail "shard 1"
s0sum=$(cksum < s0.jsonl)
expect_error "is the input" merge s0.jsonl s0.jsonl s1.jsonl
unchanged s0.jsonl "$s0sum" "merge onto a shard"
# Two outputs in one file would overwrite each other.
expect_error "are one file" "${SIM[@]}" -t t.kvtrace --json r.out --csv ./r.out

if ((failures)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "CLI files: all checks passed"
