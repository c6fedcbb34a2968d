#!/usr/bin/env bash
# Output files are written whole or not at all, and a write error is a failing exit naming the
# file (ctest: CliOutputs). Usage: check_cli_outputs.sh KVPOLICY_BINARY
set -uo pipefail
K=${1:?usage: check_cli_outputs.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
"$K" trace generate --kind zipf --params requests=2000,prefixes=50 --out t.kvtrace > /dev/null || exit 1

# A full disk is an error, not an empty file and exit 0.
expect_error "'/dev/full'" trace stats -t t.kvtrace --json /dev/full
"$K" trace stats -t t.kvtrace --json stats.json > /dev/null 2>&1 || fail "trace stats --json"
[[ $(head -c1 stats.json) == "{" ]] || fail "trace stats --json wrote no JSON object"

# A conversion that cannot finish (here a 1 KB file-size limit; EFBIG instead of SIGXFSZ) leaves
# the file that was there, never a shorter one that reads as a valid trace.
for to in oracle-general native; do
  echo "previous" > out.bin
  (
    ulimit -f 1
    trap '' XFSZ
    "$K" trace convert -t t.kvtrace --to $to -o out.bin > /dev/null 2> err.txt
  ) && fail "trace convert --to $to past the file-size limit exited 0"
  grep -q "'out.bin'" err.txt || fail "trace convert --to $to: the error names no file: $(cat err.txt)"
  echo previous | cmp -s - out.bin || fail "trace convert --to $to replaced out.bin with a partial file"
  no_temporaries "trace convert --to $to"
done

# Converting onto the input refuses, whatever the spelling, and leaves the input as it was.
sum=$(cksum < t.kvtrace)
ln -s t.kvtrace link.kvtrace
for out in t.kvtrace ./t.kvtrace "$work/t.kvtrace" link.kvtrace; do
  expect_error "is the input" trace convert -t t.kvtrace --to native -o "$out"
done
[[ $(cksum < t.kvtrace) == "$sum" ]] || fail "trace convert onto its input changed it"
# So does every other output: a sweep's --json would be truncated before the trace is read.
expect_error "is the input" simulate -t t.kvtrace -p lru -c 5% --json ./t.kvtrace
expect_error "is the input" trace stats -t link.kvtrace --json=t.kvtrace
expect_error "is the input" mrc -t t.kvtrace -p lru --csv "$work/t.kvtrace"
[[ $(cksum < t.kvtrace) == "$sum" ]] || fail "an output onto the input changed it"
"$K" trace convert -t t.kvtrace --to native -o copy.kvtrace > /dev/null || fail "trace convert"
"$K" trace stats -t copy.kvtrace > /dev/null 2>&1 || fail "the converted copy does not read"

# An oracleGeneral file streams by default: the same rows as the whole-trace replay (one job, so
# both write their rows in configuration order, not in the order parallel replays finish).
"$K" trace convert -t t.kvtrace --to oracle-general -o t.oracleGeneral > /dev/null || fail "convert"
"$K" simulate -t t.oracleGeneral -p lru,belady -c 5% -j 1 --json streamed.jsonl > /dev/null 2>&1 &&
  "$K" simulate -t t.oracleGeneral -p lru,belady -c 5% -j 1 --no-stream --json whole.jsonl \
    > /dev/null 2>&1 || fail "simulate on oracleGeneral"
python3 "$same_results" streamed.jsonl whole.jsonl ||
  fail "oracleGeneral streamed and whole differ"

# --resume reads its results back from a regular file only: /dev/full never ends (it read 1 GB in
# 8 s before). The timeout turns a hang into a failure.
err=$(timeout 20 "$K" simulate -t t.kvtrace -p lru -c 0.1 --resume --json /dev/full 2>&1 > /dev/null)
rc=$?
[[ $rc -ne 0 && $rc -ne 124 && $err == *"'/dev/full'"*"regular file"* ]] ||
  fail "simulate --resume --json /dev/full -> exit $rc, stderr: $err"

# A mistyped command is named, with the commands there are.
expect_error "unknown command 'simulat'; the commands are: " simulat -t t.kvtrace
expect_error "simulate" simulat -t t.kvtrace

finish "outputs written whole or not at all"
