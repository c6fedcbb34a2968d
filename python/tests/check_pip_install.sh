#!/usr/bin/env bash
# ctest PythonPackage: `pip install --no-build-isolation .` and `pip wheel --no-build-isolation .`
# work offline in a fresh `python3 -m venv --system-site-packages`, from a copy of the sources
# in a temporary directory. The copy's CMake tree (build-pip/, pyproject.toml and setup.py) is
# at the depth of the usual build/, so ccache (paths relative to the source tree) hits.
# Usage: check_pip_install.sh SOURCE_DIR [PYTHON]
set -euo pipefail
src=${1:?usage: check_pip_install.sh SOURCE_DIR [PYTHON]}
python=${2:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

# The sources as a clone has them (tracked and new files, no build trees).
mkdir "$work/src"
(cd "$src" && git ls-files -z --cached --others --exclude-standard 2>/dev/null ||
   find . -path './build*' -prune -o -path ./.git -prune -o -type f -print0) |
  (cd "$src" && xargs -0 cp --parents -t "$work/src" 2>/dev/null || true)
[[ -f $work/src/pyproject.toml && -f $work/src/src/core/tree.cc ]] || fail "copying the sources"

"$python" -m venv --system-site-packages "$work/venv"
pip=("$work/venv/bin/python" -m pip --disable-pip-version-check --no-input)
export PIP_NO_INDEX=1 PIP_NO_CACHE_DIR=1  # offline: nothing may come from an index
start=$SECONDS
"${pip[@]}" install --no-build-isolation "$work/src" > "$work/install.log" 2>&1 ||
  { tail -40 "$work/install.log"; fail "pip install"; }
echo "pip install: $((SECONDS - start)) s"

# The installed package, imported from outside the sources: version, module, stubs, plot helper.
cd "$work"
"$work/venv/bin/python" - "$src" <<'PY' || fail "the installed package"
import os, re, subprocess, sys
import kvpolicy
where = os.path.dirname(kvpolicy.__file__)
assert where.startswith(sys.prefix), f"kvpolicy imported from {where}, not the venv"
version = re.search(r"project\(kvpolicy\s+VERSION\s+([0-9.]+)",
                    open(os.path.join(sys.argv[1], "CMakeLists.txt")).read()).group(1)
assert kvpolicy.__version__ == version, (kvpolicy.__version__, version)
for f in ("__init__.pyi", "py.typed", "plot_mrc.py", "plot_size.py", "plot_leaderboard.py",
          "figures.py"):
    assert os.path.exists(os.path.join(where, f)), f
c = kvpolicy.Cache("s3fifo", capacity_blocks=8, block_tokens=4)
c.insert(list(range(16)))
assert c.match(list(range(16))) == 16
out = subprocess.run([sys.executable, "-m", "pip", "show", "kvpolicy"], capture_output=True,
                     text=True, check=True).stdout
assert f"Version: {version}" in out, out
print(f"installed kvpolicy {kvpolicy.__version__} in {where}")
PY

# The wheel: the module, the stubs and the plot helper inside; a second build reuses the tree.
start=$SECONDS
"${pip[@]}" wheel --no-build-isolation --no-deps -w "$work/wheels" "$work/src" \
  > "$work/wheel.log" 2>&1 || { tail -40 "$work/wheel.log"; fail "pip wheel"; }
echo "pip wheel: $((SECONDS - start)) s"
wheel=$(ls "$work"/wheels/kvpolicy-*.whl) || fail "no wheel in $work/wheels"
"$python" - "$wheel" <<'PY' || fail "the wheel's contents"
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
for want in ("kvpolicy/__init__.py", "kvpolicy/__init__.pyi", "kvpolicy/py.typed",
             "kvpolicy/plot_mrc.py", "kvpolicy/plot_size.py", "kvpolicy/plot_leaderboard.py",
             "kvpolicy/figures.py"):
    assert want in names, (want, names)
assert any(n.startswith("kvpolicy/_kvpolicy.") and n.endswith(".so") for n in names), names
print(sys.argv[1].rsplit("/", 1)[-1], len(names), "files")
PY
echo "PythonPackage: OK"
