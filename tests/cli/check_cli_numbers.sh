#!/usr/bin/env bash
# Bad numbers on the command line get one clear error and a failing exit, never a result (ctest:
# CliRejectsBadNumbers). Usage: check_cli_numbers.sh KVPOLICY_BINARY
set -uo pipefail
K=${1:?usage: check_cli_numbers.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
"$K" trace generate --kind zipf --params requests=200,prefixes=20 --out t.kvtrace > /dev/null || exit 1
expect_error "finite number" simulate -t t.kvtrace -p lru -c 0.1 --dram nan
expect_error "finite number" simulate -t t.kvtrace -p lru -c 0.1 --dram 1e300
expect_error "finite number" simulate -t t.kvtrace -p lru -c 0.1 --xi nan
expect_error "finite number" simulate -t t.kvtrace -p lru -c 0.1 --slo inf
expect_error "10^15 blocks" simulate -t t.kvtrace -p lru -c 1e19
expect_error "finite number" serve -t t.kvtrace --rate nan
expect_error "finite number" serve -t t.kvtrace --rate -3
expect_error "finite number" serve -t t.kvtrace --time-scale 0
expect_error "less than one block" serve -t t.kvtrace --capacity 1e-9
expect_error "worker count" serve -t t.kvtrace --workers 0
expect_error "--split: 'nan' is not a finite" route-tune -t t.kvtrace -r cache_aware --split nan
expect_error "--split must be in (0, 1)" route-tune -t t.kvtrace -r cache_aware --split 1
expect_error "--budget must be in [1, 10000]" route-tune -t t.kvtrace -r cache_aware --budget 0
expect_error "--replicates must be in [1, 1000]" route-tune -t t.kvtrace -r cache_aware --replicates 0
expect_error "--objective: 'fast'" route-tune -t t.kvtrace -r cache_aware --objective fast
expect_error "--space: cache_threshold=0:2" route-tune -t t.kvtrace -r cache_aware --space cache_threshold=0:2
expect_error "--router is required" route-tune -t t.kvtrace
expect_error "--split must be in (0, 1)" route-tune -t t.kvtrace -r cache_aware --split 1 --json tune.json
[[ ! -e tune.json && ! -e tune.json.runs ]] || fail "route-tune wrote tune.json on a bad flag"
expect_error "must be a number in [0, 1]" simulate -t t.kvtrace -p laru:p=2 -c 0.1
expect_error "parameter p applies to predictor=noisy only" simulate -t t.kvtrace -p laru:p=0.2 -c 0.1
expect_error "parameter trees applies to predictor=gbm only" simulate -t t.kvtrace -p laru:predictor=noisy,trees=5 -c 0.1
# A billion noise levels (past 2 GB before the bound); 1 GB of address space makes a regression
# fail fast instead of filling the machine's memory (not under ASan, whose shadow memory alone
# reserves terabytes of address space).
limit=1000000
# ASan is linked dynamically by gcc, statically (its symbols exported) by clang. Strings, not
# grep -q: under pipefail grep -q races the command it reads.
[[ $(ldd "$K" 2> /dev/null) == *libasan* || $(nm -D "$K" 2> /dev/null) == *__asan_init* ]] &&
  limit=unlimited
err=$( (ulimit -v $limit; "$K" study robustness -t t.kvtrace -p laru --noise 0:1:1e-9) 2>&1 > /dev/null)
rc=$?
if [[ $rc -eq 0 || $err != *"levels; at most 1000"* ]]; then
  fail "robustness --noise 0:1:1e-9 -> exit $rc, stderr: $err"
fi
finish "all bad numbers rejected"
