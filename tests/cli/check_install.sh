#!/usr/bin/env bash
# The installed library works for an engine (ctest InstalledLibrary): `cmake --install` into a
# temporary prefix, then examples/ built against it with find_package(kvpolicy) (shared and
# static) and with pkg-config, and run. Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=${1:?usage: check_install.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: check_install.sh BUILD_DIR SOURCE_DIR}
source "$(dirname "$0")/lib.sh"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in lib/libkvpolicy.so lib/libkvpolicy.a include/kvpolicy/cache/kv_cache.h \
         lib/cmake/kvpolicy/kvpolicyConfig.cmake lib/pkgconfig/kvpolicy.pc; do
  [[ -e $prefix/$f ]] || { echo "FAILED: $f was not installed"; exit 1; }
done

cmake -S "$src/examples" -B "$work/examples" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release > "$work/configure.log" || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/examples" > "$work/build.log" || { cat "$work/build.log"; exit 1; }
for exe in embed embed_static; do
  out=$("$work/examples/$exe" s3fifo)
  echo "$exe: $out"
  [[ $out == "policy s3fifo: "*"prompt tokens cached"* ]] || { echo "FAILED: $exe"; exit 1; }
done
# A policy that reads the future cannot run online: one clear error, exit 1.
if err=$("$work/examples/embed" belady 2>&1); then echo "FAILED: belady ran online"; exit 1; fi
[[ $err == *"future"* ]] || { echo "FAILED: belady's error: $err"; exit 1; }

# pkg-config, as a Makefile-based engine would link it.
PKG_CONFIG_PATH=$prefix/lib/pkgconfig
export PKG_CONFIG_PATH
c++ "$src/examples/embed.cc" -o "$work/embed_pc" $(pkg-config --cflags --libs kvpolicy) \
  -Wl,-rpath,"$prefix/lib"
"$work/embed_pc" lru | grep -q "policy lru: " || { echo "FAILED: pkg-config build"; exit 1; }
