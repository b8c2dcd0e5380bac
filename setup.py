"""pip install . (offline): the tilesim Python package (python/tilesim/) with the native module built by
this checkout's CMake build (docs/python.md).

    /usr/bin/python3 -m venv --system-site-packages ~/venvs/tilesim     # Debian's python3 with python3-torch
    ~/venvs/tilesim/bin/pip install --no-build-isolation --no-index .

The native module is taken from build/release/python/tilesim/ (TILESIM_BUILD_DIR overrides), built there
first when it is missing, for the interpreter that runs pip. It reads the machine files, presets and
validation data of the checkout it was built from, so the checkout stays where it is.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


def require_interpreter_packages():
    """Fails the install at once, saying what is missing and how to get it, when this interpreter lacks
    `wheel` (pip's --no-build-isolation builds the wheel with the interpreter's own) or `torch` (the
    native module is built against the libtorch of Debian's python3-torch): a virtual environment made
    from another python3, or without --system-site-packages, has neither."""
    import importlib.util
    missing = [(name, debian) for name, debian in (("wheel", "python3-wheel"), ("torch", "python3-torch"))
               if importlib.util.find_spec(name) is None]
    if missing:
        names = ", ".join(f"`{name}` (Debian: {debian})" for name, debian in missing)
        raise SystemExit(f"tilesim: expected the Python packages {names} in the interpreter running this install "
                         f"({sys.executable}), found them missing; make the virtual environment from Debian's python3 with its "
                         "packages visible: /usr/bin/python3 -m venv --system-site-packages ~/venvs/tilesim (docs/python.md)")


require_interpreter_packages()


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(tilesim VERSION ([0-9.]+)", f.read()).group(1)


class BuildWithCMake(build_py):
    """Copies the pure-Python files, then the native module of the CMake build beside them."""

    def run(self):
        super().run()
        build = os.environ.get("TILESIM_BUILD_DIR", os.path.join(ROOT, "build", "release"))
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        module = os.path.join(build, "python", "tilesim", "_core" + suffix)
        if not os.path.exists(module):
            print(f"tilesim: building the native module in {build} for {sys.executable}", flush=True)
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                                   f"-DPython3_EXECUTABLE={sys.executable}"])
            subprocess.check_call(["cmake", "--build", build, "--target", "tilesim_python"])
        if not os.path.exists(module):
            found = glob.glob(os.path.join(build, "python", "tilesim", "_core*"))
            raise SystemExit(f"tilesim: expected the native module {module} for this Python ({sys.executable}), found {found or 'none'}")
        shutil.copy2(module, os.path.join(self.build_lib, "tilesim"))


setup(
    name="tilesim",
    version=project_version(),
    description="tilesim: performance model of gather/scatter and GNN workloads on a tile-based IPU-class processor",
    packages=["tilesim"],
    package_dir={"": "python"},
    python_requires=">=3.9",
    cmdclass={"build_py": BuildWithCMake},
)
