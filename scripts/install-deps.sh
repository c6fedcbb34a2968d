#!/usr/bin/env bash
# Installs every Debian package kvpolicy needs. Idempotent; run as root on a fresh machine.
set -euo pipefail
packages=(
  build-essential cmake ninja-build ccache pkg-config clang-format
  libsimdjson-dev libcli11-dev libfmt-dev libzstd-dev
  libgtest-dev libgmock-dev libbenchmark-dev libxgboost-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
