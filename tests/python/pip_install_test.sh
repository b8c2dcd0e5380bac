#!/usr/bin/env bash
# `pip install .` works offline: a fresh virtual environment (seeing Debian's python3-torch and numpy),
# pip with no index and no build isolation, the module built by this build tree; then the installed
# package, imported from outside the checkout, runs a workload.
# Usage: pip_install_test.sh PYTHON BUILD_DIR (run from the repository root)
set -euo pipefail
python=$1
build_dir=$2
repo=$(pwd)
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
# Without Debian's packages (no --system-site-packages: no wheel, no torch) the install fails at once,
# naming what is missing and the venv command that has them.
bare=$(mktemp -d)
trap 'rm -rf "$venv" "$bare"' EXIT
"$python" -m venv "$bare"
if "$bare/bin/pip" install --no-index --no-build-isolation --no-deps "$repo" >"$bare/pip.log" 2>&1; then
  echo "expected pip install to fail in a venv without wheel and torch; it succeeded" >&2; exit 1
fi
grep -q 'tilesim: expected the Python packages `wheel` (Debian: python3-wheel), `torch` (Debian: python3-torch)' "$bare/pip.log" || {
  echo "expected the missing-package message; pip said:" >&2; cat "$bare/pip.log" >&2; exit 1; }
"$python" -m venv --system-site-packages "$venv"
TILESIM_BUILD_DIR="$build_dir" "$venv/bin/pip" install --quiet --no-index --no-build-isolation --no-deps "$repo"
cd "$venv"
"$venv/bin/python" - "$repo" <<'PY'
import pathlib, sys
import tilesim
repo = pathlib.Path(sys.argv[1])
where = pathlib.Path(tilesim.__file__).resolve()
assert repo not in where.parents, f"expected the installed package, found {where}"
r = tilesim.run(str(repo / "workloads/examples/small.json"), backends="gpu-model:a100-40gb")
assert r.exit_code == 0 and len(r.rows()) == 2, r.rows()
print("installed:", where.parent, "-", tilesim.version())
PY
