# Sourced by the serve-mode studies once `src` is the repository and `out` the output directory
# (its first argument): makes `out` absolute and enters it, clears its earlier JSON, and sets the
# binary K, the traces' directory T, Mooncake's trace M and `log` (prints a command to stderr,
# runs it, drops its stdout). Fails naming whichever of K, M and REQUIRE (more traces, relative to
# T) is missing.
mkdir -p "$out"
out=$(cd "$out" && pwd)
K=$(realpath "${KVPOLICY:-$src/build/kvpolicy}")
T=${KVPOLICY_DATA:-$src/../shared/traces}
M=$T/mooncake-conversation/conversation_trace.jsonl
for f in "$K" "$M" "${REQUIRE[@]/#/$T/}"; do [[ -e $f ]] || { echo "missing: $f" >&2; exit 1; }; done
cd "$out"
rm -f ./*.json ./*.jsonl
log() { echo "+ $*" >&2; "$@" > /dev/null; }
