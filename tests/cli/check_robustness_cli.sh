#!/usr/bin/env bash
# `kvpolicy study robustness` draws the noise per request unless told --redraw access, and every row
# says which (ctest: CliRobustnessNoiseModel). Usage: check_robustness_cli.sh KVPOLICY_BINARY
set -uo pipefail
K=${1:?usage: check_robustness_cli.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
"$K" trace generate --kind zipf --params requests=300,prefixes=30 --out t.kvtrace > /dev/null || exit 1
"$K" study robustness -t t.kvtrace -c 0.2 -n 0.5 -p lru,laru --json default.jsonl > default.txt 2> /dev/null ||
  fail "robustness with the defaults exited $?"
"$K" study robustness -t t.kvtrace -c 0.2 -n 0.5 -p lru,laru --redraw access --json access.jsonl \
  > access.txt 2> /dev/null || fail "robustness --redraw access exited $?"
grep -q '"policy":"laru".*"redraw":"request"' default.jsonl || fail "default row lacks redraw request"
grep -q '"spec":"laru:[^"]*redraw=request' default.jsonl || fail "default spec lacks redraw=request"
grep -q '"policy":"laru".*"redraw":"access"' access.jsonl || fail "--redraw access row lacks it"
grep -q '"spec":"laru:[^"]*redraw=access' access.jsonl || fail "--redraw access spec lacks it"
grep -q '"policy":"lru".*"redraw":null' default.jsonl || fail "lru row names a noise model"
grep -q "noise redrawn per request" default.txt || fail "the default table does not say per request"
grep -q "noise redrawn per access" access.txt || fail "the access table does not say per access"
"$K" study robustness -t t.kvtrace -c 0.2 -n 0.5 -p laru --redraw never > /dev/null 2>&1 &&
  fail "--redraw never was accepted"
finish "robustness noise model: default request, --redraw access, recorded per row"
