#!/usr/bin/env bash
# Runs README.md's "How much KV cache does my traffic need?" and "A tour of the CLI" blocks,
# command by command, so the README stays runnable
# (ctest: ReadmeTour). Usage: run_tour.sh BUILD_DIR [README]. The block's paths are rewritten:
# build/kvpolicy -> BUILD_DIR/kvpolicy, ../shared/traces -> $KVPOLICY_DATA, scripts/ -> the
# source tree's; each command runs in a fresh temporary directory, and `bench` gets --quick.
# Stops at the first command that fails; exits 0 with a message when the traces are absent.
set -euo pipefail

build_dir=$(cd "${1:?usage: run_tour.sh BUILD_DIR [README]}" && pwd)
source_dir=$(cd "$(dirname "$0")/.." && pwd)
readme=${2:-$source_dir/README.md}
data=${KVPOLICY_DATA:-}

if [[ -z $data || ! -f $data/mooncake-conversation/conversation_trace.jsonl ||
      ! -f $data/chatbot-arena/chatbot_arena_conversations_raw.jsonl ]]; then
  echo "README tour skipped: KVPOLICY_DATA (${data:-unset}) does not hold the Mooncake and" \
       "Chatbot Arena traces"
  exit 0
fi
data=$(cd "$data" && pwd)

# The blocks: the first ```sh fence after each of the two headings, with continued lines joined.
mapfile -t commands < <(awk '
  /^## (How much KV cache does my traffic need|A tour of the CLI)/ { tour = 1; next }
  tour && /^```sh/ { inside = 1; next }
  inside && /^```/ { inside = 0; tour = 0; next }
  inside {
    if (line != "") sub(/^[ \t]+/, "")
    if (sub(/\\[ \t]*$/, "")) { line = line $0; next }
    print line $0; line = ""
  }' "$readme")
if ((${#commands[@]} == 0)); then
  echo "no sh block under '## A tour of the CLI' or the sizing heading in $readme" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
tour_start=$SECONDS
for i in "${!commands[@]}"; do
  cmd=${commands[$i]}
  cmd=${cmd//build\/kvpolicy/\"$build_dir\"/kvpolicy}
  cmd=${cmd//..\/shared\/traces/\"$data\"}
  cmd=${cmd//scripts\//\"$source_dir\"/scripts/}
  # The full benchmark takes minutes; --quick runs the same tables on smaller workloads.
  if [[ $cmd == *"/kvpolicy bench "* ]]; then cmd=${cmd/ bench / bench --quick }; fi
  start=$SECONDS
  if ! eval "$cmd" >"$work/out.log" 2>&1; then
    echo "FAILED (README tour command $((i + 1))): ${commands[$i]}"
    echo "ran as: $cmd"
    tail -n 40 "$work/out.log"
    exit 1
  fi
  printf '%4ds  %s\n' $((SECONDS - start)) "${commands[$i]}"
done
echo "README tour: ${#commands[@]} commands passed in $((SECONDS - tour_start)) s"
