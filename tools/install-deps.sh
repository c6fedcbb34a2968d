#!/usr/bin/env bash
# Installs everything kvpolicy needs on a fresh Debian 12 machine (root, or sudo). Idempotent.
set -euo pipefail
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"

packages=(
  build-essential cmake ninja-build ccache pkg-config clang-format
  clang libclang-rt-14-dev
  libsimdjson-dev libcli11-dev libfmt-dev libzstd-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev libxgboost-dev libfasttext-dev
  python3-matplotlib
  pybind11-dev python3-dev python3-pytest python3-numpy python3-typing-extensions
  python3-setuptools python3-wheel python3-venv python3-pip python3-pybind11
  libhiredis-dev redis-server
  libopenmpi-dev openmpi-bin
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# The cl100k_base BPE vocabulary for `kvpolicy trace build`, from the npm package tiktoken
# (MIT), checked by its SHA-256. Optional: without it the builder uses its approximate tokenizer
# and says so.
vocab=/usr/local/share/kvpolicy/cl100k_base.json
vocab_sha=49a4e05dea02c8fafbd50cc4725c4aab8f39386c0afedef118e0dfebc2fe523a
if [ ! -s "$vocab" ] && command -v npm >/dev/null 2>&1; then
  tmp=$(mktemp -d)
  if (cd "$tmp" && npm pack --silent tiktoken@1.0.22 >/dev/null 2>&1) &&
     tar -xzf "$tmp/tiktoken-1.0.22.tgz" -C "$tmp" package/encoders/cl100k_base.json &&
     echo "$vocab_sha  $tmp/package/encoders/cl100k_base.json" | sha256sum -c --quiet; then
    $SUDO mkdir -p "$(dirname "$vocab")"
    $SUDO install -m 0644 "$tmp/package/encoders/cl100k_base.json" "$vocab"
    echo "install-deps: installed $vocab"
  else
    echo "install-deps: could not fetch the cl100k_base vocabulary (npm tiktoken);" \
         "kvpolicy trace build will use its approximate tokenizer" >&2
  fi
  rm -rf "$tmp"
fi
