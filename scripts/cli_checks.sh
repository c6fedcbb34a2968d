# Sourced by the CLI check scripts: a scratch directory (removed at exit) as the working one, and
# the checks they share. Needs K (the kvpolicy binary) set first.
[[ $K = /* ]] || K=$PWD/$K
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() {
  echo "FAILED: $*"
  failures=$((failures + 1))
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
