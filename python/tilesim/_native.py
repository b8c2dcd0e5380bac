"""The native module, with a message that says how to build it when it is missing."""
try:
    from . import _core  # noqa: F401  (built by CMake next to this file)
except ImportError as e:  # pragma: no cover - only without a build
    raise ImportError(
        "tilesim's native module (tilesim/_core) is not built or not importable: build tilesim "
        "(`make build`) and put build/release/python on PYTHONPATH, or `pip install .` from a checkout "
        "(docs/python.md). The import said: " + str(e)) from e

core = _core
