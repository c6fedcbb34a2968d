# The set-up every CLI check shares (tests/cli/CMakeLists.txt runs them), sourced after the check
# has set K (the kvpolicy binary) if it runs one:
#   src, same_results  the source tree, and scripts/same_results.py in it
#   data               $KVPOLICY_DATA (the traces directory), or empty
#   need_data FILE...  skips the check unless every FILE is under $data
#   skip REASON        prints "NAME: skipped: REASON" and exits $skip_code (77: ctest's skip code)
#   work               a scratch directory, the working one, removed at exit with at_exit's hooks
#   fail / fail_now    a failed check, counted (finish reports them) or ending the run at once
#   expect_error, no_temporaries, finish MESSAGE
check=$(basename "$0")
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
same_results=$src/scripts/same_results.py
if [[ -n ${K:-} && $K != /* ]]; then K=$PWD/$K; fi
data=${KVPOLICY_DATA:-}
skip_code=${skip_code:-77}

skip() {
  echo "$check: skipped: $*"
  exit "$skip_code"
}
need_data() {
  [[ -n $data ]] || skip "KVPOLICY_DATA is unset"
  local f
  for f in "$@"; do
    [[ -f $data/$f ]] || skip "KVPOLICY_DATA ($data) does not hold $f"
  done
}

work=$(mktemp -d)
exit_hooks=()
at_exit() { exit_hooks+=("$*"); }
run_exit_hooks() {
  local hook
  for hook in "${exit_hooks[@]}"; do eval "$hook"; done
  rm -rf "$work"
}
trap run_exit_hooks EXIT
cd "$work" || exit 1

failures=0
fail() {
  echo "FAILED: $*"
  failures=$((failures + 1))
}
fail_now() {
  echo "FAILED: $*" >&2
  exit 1
}
finish() {  # finish MESSAGE: a failing exit if any check failed, else MESSAGE
  if ((failures > 0)); then
    echo "$check: $failures check(s) failed"
    exit 1
  fi
  echo "$*"
}
expect_error() {  # expect_error NEEDLE ARGS...: a failing exit and NEEDLE in the error
  local needle=$1
  shift
  local err
  err=$("$K" "$@" 2>&1 > /dev/null)
  local rc=$?
  if [[ $rc -eq 0 || $err != *"$needle"* ]]; then
    fail "kvpolicy $* -> exit $rc, stderr: $err (expected a failure and '$needle')"
  fi
}
no_temporaries() {
  local left
  left=$(find . -name '.*.tmp.*')
  [[ -z $left ]] || fail "$1 left temporaries: $left"
}
# chat_conversations COUNT MAX_TURNS: Chatbot Arena JSONL on stdout, conversation c of
# c % MAX_TURNS + 1 turns; a turn whose conversation goes on says "more" most of the time, so a
# continuation classifier has something to learn.
chat_conversations() {
  local count=$1 max_turns=$2 words=(alpha bravo charlie delta echo foxtrot golf hotel india juliet)
  local c t turns w hint msgs
  for ((c = 0; c < count; ++c)); do
    turns=$((c % max_turns + 1))
    msgs=""
    for ((t = 1; t <= turns; ++t)); do
      w=${words[$(((c * 7 + t * 3) % 10))]}
      if ((t < turns && (c + t) % 5 != 0)); then hint="tell me more about"; else hint="thanks for"; fi
      msgs+="{\"role\":\"user\",\"content\":\"$hint $w number $c turn $t\"},"
      msgs+="{\"role\":\"assistant\",\"content\":\"an answer about $w\"},"
    done
    echo "{\"id\":\"conv-$c\",\"messages\":[${msgs%,}]}"
  done
}
