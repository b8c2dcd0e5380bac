#!/usr/bin/env bash
# Installs the Debian packages tilesim builds against, and only those that are missing.
# Idempotent and quiet when everything is already there. Needs root (or sudo) when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  ccache                  # compiler cache: rebuilds of unchanged sources cost a lookup (CMakeLists.txt)
  libsystemc-dev          # simulation kernel (pkg-config: systemc)
  libboost-graph-dev      # graph containers and orderings
  openmpi-bin libopenmpi-dev  # mpirun and MPI: sweeps over ranks, the engine distributed over ranks
  libmetis-dev            # k-way min-edge-cut partitions (graph-aware placement)
  nlohmann-json3-dev      # workload, machine and report JSON
  libssl-dev              # SHA-256 (libcrypto) of the resolved machines in reports
  catch2                  # tests (v2)
  libcli11-dev            # command line
  libomp-dev              # OpenMP for the CPU kernels (g++ uses libgomp; clang needs this)
  libbenchmark-dev        # bench/
  libopenblas-dev         # the torch-cpu peer's BLAS (libtorch links it), and SGEMM for comparison in bench/
  libdnnl-dev             # oneDNN: the CPU matmul in float32/float16/bfloat16 (AMX, AVX-512-BF16/FP16 by cpuid)
  libtorch-dev            # the torch-cpu peer backend (optional to CMake; ~170 packages, ~600 MB installed)
  gnuplot-nox             # plots
  clang                   # the fuzz build (make fuzz, make test-fuzz: clang++ with -fsanitize=fuzzer)
  libclang-rt-14-dev      # libFuzzer and the sanitizer runtimes for clang 14
  python3-dev             # the Python module (python/), for Debian's /usr/bin/python3
  pybind11-dev            # its C++/Python binding
  python3-numpy           # arrays in and out of the module
  python3-torch           # torch tensors in and out (the same libtorch 1.13 the peer backend links)
  python3-pytest          # the module's tests (tests/python/)
  python3-pip python3-setuptools python3-wheel python3-venv  # pip install . (offline, no build isolation)
  python3-matplotlib      # the Python example's plot (examples/python/)
  python3-pandas          # Result.to_pandas() and its tests (tests/python/)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
