"""Builds the C++ module kvpolicy._kvpolicy with CMake for pip (pyproject.toml).

The CMake tree is build-pip/ beside the sources, so that a second pip run, and every other build
directory of the same tree, share ccache's entries (CMakeLists.txt gives ccache paths relative
to the source tree); only the module's target is built. Environment:
  KVPOLICY_CMAKE_ARGS   more -D options, e.g. "-DKVPOLICY_LEARNED=OFF -DKVPOLICY_REDIS=OFF"
  CMAKE_BUILD_PARALLEL_LEVEL   jobs (default: every core)
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE = os.path.dirname(os.path.abspath(__file__))
BUILD = "build-pip"


def project_version():
    """The version of project(kvpolicy VERSION x.y.z) in CMakeLists.txt, the one source of it."""
    with open(os.path.join(SOURCE, "CMakeLists.txt")) as f:
        m = re.search(r"project\(kvpolicy\s+VERSION\s+([0-9.]+)", f.read())
    if not m:
        sys.exit("setup.py: no project(kvpolicy VERSION ...) in CMakeLists.txt")
    return m.group(1)


class CMakeBuild(build_ext):
    """Configures the CMake tree once, builds the target kvpolicy_python, copies the module."""

    def build_extension(self, ext):
        cmake = shutil.which("cmake")
        if cmake is None:
            sys.exit("setup.py: kvpolicy's module needs cmake (Debian: apt-get install cmake)")
        build = os.path.join(SOURCE, BUILD)
        args = [f"-DPython_EXECUTABLE={sys.executable}", "-DCMAKE_BUILD_TYPE=Release",
                "-DKVPOLICY_BENCH=OFF", "-DKVPOLICY_MPI=OFF"]
        try:  # pybind11 from pip or python3-pybind11; pybind11-dev's CMake files otherwise
            import pybind11
            args.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
        except ImportError:
            pass
        if shutil.which("ninja"):
            args += ["-G", "Ninja"]
        args += shlex.split(os.environ.get("KVPOLICY_CMAKE_ARGS", ""))
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            subprocess.check_call([cmake, "-S", SOURCE, "-B", build] + args)
        else:
            subprocess.check_call([cmake, "-S", SOURCE, "-B", build] + args,
                                  stdout=subprocess.DEVNULL)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.check_call([cmake, "--build", build, "--target", "kvpolicy_python",
                               "-j", jobs])
        module = [f for f in os.listdir(os.path.join(build, "python", "kvpolicy"))
                  if f.startswith("_kvpolicy.") and f.endswith(".so")]
        if len(module) != 1:
            sys.exit(f"setup.py: expected one _kvpolicy module in {build}/python/kvpolicy, "
                     f"found {module}")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(build, "python", "kvpolicy", module[0]), target)


setup(
    version=project_version(),
    ext_modules=[Extension("kvpolicy._kvpolicy", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": BUILD}},
)
