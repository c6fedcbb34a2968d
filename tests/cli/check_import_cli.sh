#!/usr/bin/env bash
# `kvpolicy trace import` end to end (ctest: CliTraceImport): docs/formats.md's worked example
# (its CSV, its command) prints what the doc shows, the JSONL variant gives the same trace, the
# trace replays with `simulate`, and a bad row is one error naming file, line and column.
# Usage: check_import_cli.sh KVPOLICY_BINARY
set -uo pipefail
K=$(realpath "${1:?usage: check_import_cli.sh KVPOLICY_BINARY}")
source "$(dirname "$0")/lib.sh"
doc=$src/docs/formats.md
# The fenced block after the line <!-- import-example:NAME --> in docs/formats.md.
block() {
  awk -v marker="<!-- import-example:$1 -->" '
    $0 == marker { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }' "$doc"
}
kvpolicy() { "$K" "$@"; }  # the doc's commands, run with this build

block csv > log.csv
block jsonl > log.jsonl
block import > import.sh
block import-jsonl > import-jsonl.sh
block output > expected.txt
for f in log.csv log.jsonl import.sh import-jsonl.sh expected.txt; do
  [[ -s $f ]] || fail "docs/formats.md has no import-example block for $f"
done
((failures > 0)) && exit 1

# The example tokenizes text with cl100k; without the vocabulary the doc's figures cannot match.
vocab=${KVPOLICY_TOKENIZER:-}
if [[ -z $vocab ]]; then
  for v in /usr/local/share/kvpolicy/cl100k_base.json /usr/share/kvpolicy/cl100k_base.json; do
    [[ -f $v ]] && vocab=$v && break
  done
fi
if [[ -f $vocab ]]; then
  source ./import.sh > got.txt 2> err.txt || fail "the doc's import command exited $?: $(cat err.txt)"
  diff -u expected.txt got.txt || fail "trace import prints other than docs/formats.md shows"
  source ./import-jsonl.sh > got-jsonl.txt 2> err.txt ||
    fail "the doc's JSONL command exited $?: $(cat err.txt)"
  stats() { "$K" trace stats -t "$1" --sessions keep 2> /dev/null | grep -v -e '^trace ' -e '^load:'; }
  [[ $(stats log.kvtrace) == "$(stats log-jsonl.kvtrace)" && -n $(stats log.kvtrace) ]] ||
    fail "the CSV and JSONL examples give different traces"
  "$K" simulate -t log.kvtrace -p lru -c 10% > sim.txt 2>&1 || fail "simulate exited $?: $(cat sim.txt)"
  grep -q "hit" sim.txt || fail "simulate printed no hit rate: $(cat sim.txt)"
else
  echo "note: the cl100k vocabulary is not installed; the worked example's output is not checked"
fi

# Tokens instead of text, no vocabulary needed: import, replay.
{
  echo "ts,user_session,prompt_ids,out"
  for i in $(seq 1 40); do
    ids=$(seq -s ' ' 1 $((16 * (i % 5 + 1))))
    echo "$i.5,s$((i % 7)),\"$ids $((1000 + i))\",$i"
  done
} > tokens.csv
"$K" trace import -i tokens.csv --map time=ts,session=user_session,tokens=prompt_ids,output=out \
  --out tokens.kvtrace > tokens.txt 2>&1 || fail "importing tokens exited $?: $(cat tokens.txt)"
grep -q "40 requests, 7 sessions, 0 skipped rows" tokens.txt || fail "tokens import: $(cat tokens.txt)"
"$K" simulate -t tokens.kvtrace -p lru -c 10% > sim2.txt 2>&1 || fail "simulate exited $?: $(cat sim2.txt)"
grep -q "hit" sim2.txt || fail "simulate printed no hit rate: $(cat sim2.txt)"

# A bad row: exit 2 and FILE:LINE: column 'NAME'; with --skip-bad-lines, skipped and counted.
printf 'ts,ids\n1,1 2 3\nsoon,4 5\n3,6\n' > bad.csv
err=$("$K" trace import -i bad.csv --map time=ts,tokens=ids --out bad.kvtrace 2>&1 > /dev/null)
rc=$?
[[ $rc -eq 2 && $err == *"bad.csv:3: column 'ts': expected a number of seconds"* ]] ||
  fail "a bad row gave exit $rc and: $err"
out=$("$K" trace import -i bad.csv --map time=ts,tokens=ids --out bad.kvtrace --skip-bad-lines 2>&1)
[[ $? -eq 0 && $out == *"skipped 1 bad row(s)"* && $out == *"2 requests"* ]] ||
  fail "--skip-bad-lines: $out"
err=$("$K" trace import -i bad.csv --map time=ts,prompt=ids --out bad.kvtrace 2>&1 > /dev/null)
[[ $? -eq 2 && $err == *"unknown target 'prompt' (valid targets: time,"* ]] ||
  fail "an unknown target: $err"

finish "trace import: the doc's example, the JSONL variant, replay and bad rows all check"
