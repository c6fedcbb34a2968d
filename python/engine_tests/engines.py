"""Where the engines' real seam files are, for the tests of kvpolicy's adapters.

The files live outside the project (KVPOLICY_ENGINES, default ../shared/engines beside the source
tree); a test module calls use_engine(name) before importing the engine, which puts the engine's
real files, its stubs and the torch shim on sys.path (as the engines' own smoke/run.sh does), or
skips the module when the files are absent. One engine per process: each test file is its own
ctest (python/CMakeLists.txt).
"""
import os
import shutil
import subprocess
import sys

import pytest

_ROOTS = {"vllm": "engines/vllm", "sglang": "engines/sglang/python", "lmcache": "engines/lmcache"}


def engines_dir():
    """The folder of the engines' files, or None."""
    path = os.environ.get("KVPOLICY_ENGINES")
    if not path:
        source = os.environ.get("KVPOLICY_SOURCE_DIR",
                                os.path.join(os.path.dirname(__file__), "..", ".."))
        path = os.path.join(source, "..", "shared", "engines")
    path = os.path.abspath(path)
    return path if os.path.isdir(os.path.join(path, "engines")) else None


def use_engine(name):
    """Puts engine `name`'s files on sys.path; skips the calling module without them."""
    root = engines_dir()
    if root is None:
        pytest.skip("the engines' files are absent (set KVPOLICY_ENGINES or put them in "
                    "../shared/engines)", allow_module_level=True)
    paths = [os.path.join(root, _ROOTS[name]), os.path.join(root, "stubs", name),
             os.path.join(root, "smoke")]
    if os.environ.get("SEAMS_TORCH", "shim") != "real":
        paths.append(os.path.join(root, "stubs", "torch_shim"))
    for p in reversed(paths):
        if p not in sys.path:
            sys.path.insert(0, p)
    return root


def data_dir():
    """The traces' folder (KVPOLICY_DATA, default ../shared/traces beside the source tree), or
    None."""
    path = os.environ.get("KVPOLICY_DATA")
    if not path:
        source = os.environ.get("KVPOLICY_SOURCE_DIR",
                                os.path.join(os.path.dirname(__file__), "..", ".."))
        path = os.path.join(source, "..", "shared", "traces")
    return path if os.path.isdir(path) else None


def kvpolicy_binary():
    """The kvpolicy command line (KVPOLICY_BINARY, ./kvpolicy in the build directory ctest runs
    in, or on PATH), or None."""
    for path in (os.environ.get("KVPOLICY_BINARY"), os.path.join(os.getcwd(), "kvpolicy"),
                 shutil.which("kvpolicy")):
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


ARENA = "chatbot-arena/chatbot_arena_conversations_raw.jsonl"


def arena_trace(cache_dir):
    """Chatbot Arena built into a kvpolicy trace (16-token blocks) by `kvpolicy trace build`,
    kept in cache_dir; None without the data or the binary."""
    data, binary = data_dir(), kvpolicy_binary()
    if data is None or binary is None or not os.path.isfile(os.path.join(data, ARENA)):
        return None
    out = os.path.join(cache_dir, "arena.kvtrace")
    if not os.path.isfile(out):
        os.makedirs(cache_dir, exist_ok=True)
        partial = os.path.join(cache_dir, f"arena.{os.getpid()}.kvtrace")  # the suffix: the format
        subprocess.run([binary, "trace", "build", "--source", "chatbot-arena", "--input",
                        os.path.join(data, ARENA), "--out", partial], check=True,
                       capture_output=True, timeout=600)
        os.replace(partial, out)
    return out
