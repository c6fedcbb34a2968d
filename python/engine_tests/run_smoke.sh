#!/usr/bin/env bash
# The engines' own seam smoke (smoke/run.sh: vLLM's and SGLang's unit tests unmodified, then each
# seam driven), with kvpolicy's adapters loaded from python/smoke. Skips (77) without the files.
# Usage: run_smoke.sh SOURCE_DIR BUILD_PYTHON_DIR
set -euo pipefail
source_dir=$1
engines=${KVPOLICY_ENGINES:-$source_dir/../shared/engines}
if [ ! -f "$engines/smoke/run.sh" ]; then
  echo "engines' files absent ($engines): skipped"
  exit 77
fi
KVPOLICY_PY=$2 ADAPTERS=$source_dir/python/smoke bash "$engines/smoke/run.sh"
