"""Shared pieces of the Python module's tests (run by CTest from the repository root with PYTHONPATH
set to the build tree's python/ folder and TILESIM_BINARY to the executable of the same build)."""
import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
TILESIM = os.environ.get("TILESIM_BINARY", str(REPO / "build" / "release" / "apps" / "tilesim"))
EXAMPLES = sorted((REPO / "workloads" / "examples").glob("*.json"))


def pytest_configure(config):
    # Cases over about 3 s: CTest runs them as one test labelled python-slow (make test, not make check).
    config.addinivalue_line("markers", "slow: over about 3 s; run by make test only (CTest label python-slow)")


def run_cli(*args, cwd=REPO):
    """The executable, as a user runs it: (exit code, stdout, stderr)."""
    p = subprocess.run([TILESIM, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def cli_error(*args):
    """The message the executable prints after "tilesim: error: ", and its exit code."""
    code, _, err = run_cli(*args)
    lines = [line for line in err.splitlines() if line.startswith("tilesim: error: ")]
    assert lines, f"expected an error from tilesim {args}, got exit {code} and stderr {err!r}"
    return lines[-1][len("tilesim: error: "):], code


def write_json(path, document):
    path.write_text(json.dumps(document, indent=2))
    return path


@pytest.fixture(autouse=True)
def at_repository_root(monkeypatch):
    monkeypatch.chdir(REPO)
