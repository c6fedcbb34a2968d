#!/usr/bin/env bash
# The installed library works for an engine (ctest InstalledLibrary): `cmake --install` into a
# temporary prefix, then examples/ built against it with find_package(kvpolicy) (shared and
# static), with find_package(kvpolicy COMPONENTS core) (examples/core_only: no ML library and no
# hiredis may be loaded) and with pkg-config, and run.
# Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=${1:?usage: check_install.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: check_install.sh BUILD_DIR SOURCE_DIR}
source "$(dirname "$0")/lib.sh"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in lib/libkvpolicy_core.so lib/libkvpolicy_core.a lib/libkvpolicy_app.so \
         include/kvpolicy/cache/kv_cache.h lib/cmake/kvpolicy/kvpolicyConfig.cmake \
         lib/cmake/kvpolicy/kvpolicy_core-targets.cmake lib/pkgconfig/kvpolicy.pc \
         lib/pkgconfig/kvpolicy-core.pc; do
  [[ -e $prefix/$f ]] || { echo "FAILED: $f was not installed"; exit 1; }
done
# The package names no path of the build machine: it is found from wherever it is installed.
if grep -rl "$build\|$src" "$prefix/lib/cmake" "$prefix/lib/pkgconfig"; then
  echo "FAILED: the package files above name the build or source tree"; exit 1
fi
# pkg-config files: no -std (the consumer chooses its standard), dependencies by name.
if grep -l -- "-std" "$prefix"/lib/pkgconfig/*.pc; then echo "FAILED: -std in Cflags"; exit 1; fi

configure() {  # configure SOURCE BUILD: quiet, the log on failure
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
    > "$2.log" 2>&1 && cmake --build "$2" >> "$2.log" 2>&1 || { cat "$2.log"; exit 1; }
}
configure "$src/examples" "$work/examples"
configure "$src/examples/core_only" "$work/core_only"
for exe in examples/embed examples/embed_static core_only/embed_core core_only/embed_core_static; do
  out=$("$work/$exe" s3fifo)
  echo "$exe: $out"
  [[ $out == "policy s3fifo: "*"prompt tokens cached"* ]] || { echo "FAILED: $exe"; exit 1; }
done
# A learned policy, whose predictor only registers itself: the program calls nothing of the
# library holding it, which must still be linked (shared) and kept whole (static).
for exe in examples/embed examples/embed_static; do
  out=$("$work/$exe" "laru:predictor=gbm") || { echo "FAILED: $exe laru:predictor=gbm: $out"; exit 1; }
  [[ $out == "policy laru:predictor=gbm: "* ]] || { echo "FAILED: $exe laru: $out"; exit 1; }
done
# A policy that reads the future cannot run online: one clear error, exit 1.
if err=$("$work/examples/embed" belady 2>&1); then echo "FAILED: belady ran online"; exit 1; fi
[[ $err == *"future"* ]] || { echo "FAILED: belady's error: $err"; exit 1; }

# What the core-only programs load: libkvpolicy_core (the shared one) and no other component,
# no hiredis and no ML library.
absent='hiredis|xgboost|fasttext|dmlc|gomp|kvpolicy_(learned|trace|route|embed|app)'
for exe in core_only/embed_core core_only/embed_core_static; do
  libs=$(ldd "$work/$exe")
  if grep -E "$absent" <<< "$libs"; then echo "FAILED: $exe loads the libraries above"; exit 1; fi
done
grep -q libkvpolicy_core.so <<< "$(ldd "$work/core_only/embed_core")" ||
  { echo "FAILED: embed_core does not load libkvpolicy_core.so"; exit 1; }
if grep -q libkvpolicy <<< "$(ldd "$work/core_only/embed_core_static")"; then
  echo "FAILED: embed_core_static loads a shared kvpolicy"; exit 1
fi
echo "core only: no library matching '$absent' loaded"

# A component the build does not have is a clear error at find_package.
mkdir -p "$work/missing"
cat > "$work/missing/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.24)
project(missing LANGUAGES CXX)
find_package(kvpolicy REQUIRED COMPONENTS gpu)
CMAKE
if cmake -S "$work/missing" -B "$work/missing/build" -DCMAKE_PREFIX_PATH="$prefix" \
     > "$work/missing.log" 2>&1; then
  echo "FAILED: find_package(kvpolicy COMPONENTS gpu) succeeded"; exit 1
fi
grep -q "kvpolicy has no component gpu" "$work/missing.log" ||
  { cat "$work/missing.log"; echo "FAILED: no clear error for a missing component"; exit 1; }

# pkg-config, as a Makefile-based engine would link it: the whole library, and core alone.
PKG_CONFIG_PATH=$prefix/lib/pkgconfig
export PKG_CONFIG_PATH
c++ -std=c++20 "$src/examples/embed.cc" -o "$work/embed_pc" $(pkg-config --cflags --libs kvpolicy) \
  -Wl,-rpath,"$prefix/lib"
"$work/embed_pc" lru | grep -q "policy lru: " || { echo "FAILED: pkg-config build"; exit 1; }
c++ -std=c++20 "$src/examples/embed.cc" -o "$work/embed_pc_core" \
  $(pkg-config --cflags --libs kvpolicy-core) -Wl,-rpath,"$prefix/lib"
"$work/embed_pc_core" lru | grep -q "policy lru: " || { echo "FAILED: pkg-config core build"; exit 1; }
if ldd "$work/embed_pc_core" | grep -E "$absent"; then
  echo "FAILED: the pkg-config core build loads the libraries above"; exit 1
fi

# Without the optional dependencies (-DKVPOLICY_LEARNED=OFF -DKVPOLICY_REDIS=OFF, no MPI), the
# core and route components and the command line build and load no ML library and no hiredis,
# and what needs them is refused naming the option. The tree is beside BUILD_DIR
# (BUILD_DIR-lean), where ccache's paths relative to the sources hit.
lean=$(dirname "$build")/$(basename "$build")-lean
type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
cmake -S "$src" -B "$lean" -G Ninja -DCMAKE_BUILD_TYPE="${type:-Release}" -DKVPOLICY_BENCH=OFF \
  -DKVPOLICY_LEARNED=OFF -DKVPOLICY_REDIS=OFF -DKVPOLICY_MPI=OFF > "$work/lean.log" 2>&1 &&
  cmake --build "$lean" --target kvpolicy_core_shared kvpolicy_core_archive \
    kvpolicy_route_shared kvpolicy >> "$work/lean.log" 2>&1 ||
  { tail -40 "$work/lean.log"; echo "FAILED: the build without learned and Redis"; exit 1; }
for f in libkvpolicy_core.so libkvpolicy_route.so kvpolicy; do
  if ldd "$lean/$f" | grep -E 'xgboost|fasttext|hiredis'; then
    echo "FAILED: $f of the lean build loads the libraries above"; exit 1
  fi
done
K=$lean/kvpolicy
set +e  # expect_error and fail count the failures; finish reports them
"$K" trace generate --kind conversation --params sessions=40 --seed 1 --out lean.kvtrace \
  > /dev/null
"$K" simulate -t lean.kvtrace -p lru,s3fifo,laru -c 10% > lean-sim.txt ||
  { echo "FAILED: the lean command line's simulate"; exit 1; }
expect_error "-DKVPOLICY_LEARNED=OFF" simulate -t lean.kvtrace -p laru:predictor=gbm -c 10%
expect_error "-DKVPOLICY_LEARNED=OFF" predictor-report -t lean.kvtrace
expect_error "-DKVPOLICY_REDIS=OFF" embed bench --store redis --kind zipf
"$K" policies > lean-policies.txt || fail "the lean command line's policies listing"
grep -q "predictor=gbm: predictor 'gbm' needs XGBoost: this kvpolicy was built with -DKVPOLICY_LEARNED=OFF" \
  lean-policies.txt || fail "the lean listing does not say the GBM predictor is absent, and why"
"$K" compare -c 5% > lean-compare.txt || fail "the lean command line's compare"
finish "lean build ($lean): core, route and the command line without XGBoost, fastText, hiredis"
echo "InstalledLibrary: OK"
