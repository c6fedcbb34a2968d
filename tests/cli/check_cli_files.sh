#!/usr/bin/env bash
# Nothing destroyed, nothing stale (issue 32): an output never lands on an input however either
# is spelt; a run that fails touches no output; --resume refuses a file that is no results file
# and rows of a trace that changed since; whole-file outputs are written all or nothing, through
# a symlink, with no temporary left after SIGTERM; a configuration given twice runs once (ctest:
# CliFiles). Usage: check_cli_files.sh KVPOLICY_BINARY
set -uo pipefail
K=${1:?usage: check_cli_files.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
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
onto_trace study lpc -tt.kvtrace -p lru,belady -c 5% --json t.kvtrace
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

# --- A run that fails touches no output: the previous results stay, no new file appears ---
echo '{"previous":"results"}' > prev.json
psum=$(cksum < prev.json)
for cmd in "simulate -p lru -c 5% --json" "compare -p lru -c 5% --json" "mrc -p lru --json" \
           "mrc -p lru --csv" "study lpc -p lru,belady -c 5% --json" "serve -p lru --json" \
           "simulate -p lru -c 5% --csv"; do
  read -ra args <<< "$cmd"
  expect_error "missing.kvtrace" "${args[@]}" prev.json -t missing.kvtrace
  unchanged prev.json "$psum" "$cmd with a trace that does not load"
  expect_error "missing.kvtrace" "${args[@]}" new.out -t missing.kvtrace
  [[ -e new.out ]] && fail "$cmd with a trace that does not load created new.out"
done
expect_error "missing.csv" embed bench --trace missing.csv --json prev.json
unchanged prev.json "$psum" "embed bench with a trace that does not load"

# --- --resume refuses a file that is no results file, and changes nothing in it ---
printf 'my notes\nthe last line has no newline' > notes.txt
nsum=$(cksum < notes.txt)
expect_error "notes.txt" "${SIM[@]}" -t t.kvtrace --json notes.txt --resume
unchanged notes.txt "$nsum" "--resume on a file of notes"
printf '{"a": 1}\n{"b": 2' > other.jsonl
osum=$(cksum < other.jsonl)
expect_error "other.jsonl:1" "${SIM[@]}" -t t.kvtrace --json other.jsonl --resume
unchanged other.jsonl "$osum" "--resume on another JSONL file"

# --- --resume against a trace that changed at the same path: refused, naming both ---
mooncake() {  # mooncake N: N requests of a Mooncake-format trace, whose name is its path
  for ((i = 0; i < $1; i++)); do
    echo "{\"timestamp\": $i, \"input_length\": 1000, \"output_length\": 8, \"hash_ids\": [$((i % 7)), $i]}"
  done > g.jsonl
}
mooncake 300
"$K" "${SIM[@]}" -t g.jsonl --json g-results.jsonl > /dev/null 2>&1 || fail "simulate g.jsonl"
"$K" serve -t g.jsonl -p lru --json gs-results.jsonl > /dev/null 2>&1 || fail "serve g.jsonl"
gsum=$(cksum < g-results.jsonl)
mooncake 3000
expect_error "300 requests" "${SIM[@]}" -t g.jsonl --json g-results.jsonl --resume
expect_error "3000 requests" "${SIM[@]}" -t g.jsonl --json g-results.jsonl --resume
unchanged g-results.jsonl "$gsum" "--resume against a changed trace"
expect_error "the trace changed" serve -t g.jsonl -p lru --json gs-results.jsonl --resume
expect_error "the trace changed" "${SIM[@]}" -t g.jsonl --max-requests 2000 --json g-results.jsonl \
  --resume

# --- Whole-file outputs: all or nothing, through a symlink ---
head -50 "${KVPOLICY_DATA:-/nonexistent}/sharegpt-sample/sharegpt_sample_slim.jsonl" > share.jsonl 2> /dev/null
if [[ -s share.jsonl ]]; then
  echo previous > built.jsonl
  (
    ulimit -f 64
    trap '' XFSZ
    "$K" trace build --source sharegpt -i share.jsonl --tokenizer approx -o built.jsonl > /dev/null 2>&1
  ) && fail "trace build past the file-size limit exited 0"
  echo previous | cmp -s - built.jsonl || fail "trace build --out X.jsonl left a partial file"
  no_temporaries "trace build --out X.jsonl"
fi
echo old > real.json
ln -s real.json out-link.json
"$K" trace stats -t t.kvtrace --json out-link.json > /dev/null 2>&1 || fail "trace stats --json through a link"
[[ -L out-link.json ]] || fail "trace stats --json replaced the symlink with a file"
[[ $(head -c1 real.json) == "{" ]] || fail "trace stats --json did not write the link's target"

# --- SIGTERM leaves no temporary; kill -9 leaves one that the next write removes ---
killed_while_writing() {  # killed_while_writing SIGNAL: a large trace generate, killed mid-write
  "$K" trace generate --kind zipf --params requests=2000000,prefixes=50 --out slow.kvtrace \
    > /dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 200); do
    [[ -n $(find . -name '.slow.kvtrace.tmp.*') ]] && break
    sleep 0.05
  done
  kill "-$1" $pid
  wait $pid 2> /dev/null
}
killed_while_writing TERM
no_temporaries "trace generate killed with SIGTERM"
[[ -e slow.kvtrace ]] && fail "trace generate killed with SIGTERM left slow.kvtrace"
killed_while_writing KILL
"$K" trace generate --kind zipf --params requests=200,prefixes=50 --out slow.kvtrace > /dev/null ||
  fail "trace generate after a kill -9"
no_temporaries "the write after a kill -9"
rm -f slow.kvtrace

# --- A configuration given twice runs once, so merge takes the file ---
err=$("$K" simulate -t t.kvtrace -p lru -c 5%,0.05 --json twice.jsonl 2>&1 > /dev/null) ||
  fail "simulate -c 5%,0.05: $err"
[[ $(wc -l < twice.jsonl) == 1 ]] || fail "simulate -c 5%,0.05 wrote $(wc -l < twice.jsonl) rows"
[[ $err == *"run once"* ]] || fail "simulate -c 5%,0.05 said nothing: $err"
"$K" merge merged.jsonl twice.jsonl > /dev/null 2>&1 || fail "merge refused simulate -c 5%,0.05's file"
"$K" serve -t t.kvtrace -p lru --workers 1,1 --json swice.jsonl > /dev/null 2>&1 ||
  fail "serve --workers 1,1"
[[ $(wc -l < swice.jsonl) == 1 ]] || fail "serve --workers 1,1 wrote $(wc -l < swice.jsonl) rows"
"$K" study lpc -t t.kvtrace -p lru,belady -c 5%,0.05 --json lwice.jsonl > /dev/null 2>&1 ||
  fail "study lpc -c 5%,0.05"
[[ $(wc -l < lwice.jsonl) == 2 ]] || fail "study lpc -c 5%,0.05 wrote $(wc -l < lwice.jsonl) rows"

finish "CLI files: all checks passed"
