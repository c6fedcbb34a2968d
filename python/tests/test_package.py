"""The package as users see it: its version is the project's, every public name has a docstring
and a type stub, help() documents every method. Run by ctest PythonTests."""

import ast
import enum
import inspect
import os
import pydoc
import re

import kvpolicy

SOURCE = os.environ.get("KVPOLICY_SOURCE_DIR",
                        os.path.dirname(os.path.dirname(os.path.dirname(__file__))))


def test_version_is_the_projects():
    with open(os.path.join(SOURCE, "CMakeLists.txt")) as f:
        version = re.search(r"project\(kvpolicy\s+VERSION\s+([0-9.]+)", f.read()).group(1)
    assert kvpolicy.__version__ == version


def public_members(obj):
    """The names help() shows as obj's own API: no _private names, no object's defaults."""
    for name, value in inspect.getmembers(obj):
        if name.startswith("_") and name not in ("__init__", "__len__", "__contains__"):
            continue
        if name in ("__init__",) and value in (object.__init__, enum.Enum.__init__):
            continue
        if getattr(value, "__objclass__", None) is object or value is None:
            continue
        yield name, value


def test_every_public_name_has_a_docstring():
    missing = []
    for name in kvpolicy.__all__:
        obj = getattr(kvpolicy, name)
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for member, value in public_members(obj):
                doc = value.__doc__
                # pybind11's own first line is the signature; a docstring adds a second.
                text = (doc or "").strip()
                if not text or re.fullmatch(r"\w+\(.*\) -> .*", text):
                    missing.append(f"{name}.{member}")
    assert not missing, f"no docstring: {missing}"


def test_every_public_name_has_a_stub():
    with open(os.path.join(os.path.dirname(kvpolicy.__file__), "__init__.pyi")) as f:
        tree = ast.parse(f.read())
    stubbed = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            stubbed.add(node.name)
        elif isinstance(node, (ast.AnnAssign, ast.Assign)):
            for target in getattr(node, "targets", [getattr(node, "target", None)]):
                stubbed.add(getattr(target, "id", None))
    assert "__version__" in stubbed
    assert sorted(set(kvpolicy.__all__) - stubbed) == []
    assert os.path.exists(os.path.join(os.path.dirname(kvpolicy.__file__), "py.typed"))


def test_help_of_cache_reads_well():
    text = pydoc.render_doc(kvpolicy.Cache, renderer=pydoc.plaintext)
    assert "A prefix cache of KV blocks run by a kvpolicy policy" in text
    for method in ("lookup", "insert", "pin", "unpin", "evict", "stats"):
        assert re.search(rf"\n \|  {method}\(", text), method
    text = pydoc.render_doc(kvpolicy.EvictionPolicy, renderer=pydoc.plaintext)
    assert "Up to num_blocks unlocked nodes to delete now" in text


def test_plot_helper_is_package_data():
    for script in ("plot_mrc.py", "plot_size.py", "plot_leaderboard.py"):
        path = os.path.join(os.path.dirname(kvpolicy.__file__), script)
        with open(path) as f:
            assert "def main(src, out)" in f.read()
