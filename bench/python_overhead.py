#!/usr/bin/env python3
"""What tilesim.run costs over the command line's own run, on small workloads (docs/python.md).

For each workload, three medians of R calls each, interleaved so that a noisy neighbour hits all three
alike (compare the ratios, not the absolute times):
  exe      `tilesim run W --backends B --out DIR` as a process (process start and library loading included)
  cli      the same command line run in this process (tilesim.cli): the command's own run time
  python   tilesim.run(Workload.from_json(W), backends=B, out=DIR): the module's path (document
           building, in-memory checks, report read back)
and the ratios python/cli (the module's overhead over the command's run) and python/exe.

    PYTHONPATH=build/release/python python3 bench/python_overhead.py [--repeats 15]
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import tilesim

REPO = pathlib.Path(__file__).resolve().parents[1]
EXE = os.environ.get("TILESIM_BINARY", str(REPO / "build" / "release" / "apps" / "tilesim"))
CASES = [
    ("small.json", "ipu:bow,gpu-model:a100-40gb:eager"),
    ("default.json", "ipu:bow"),
    ("gcn_cora.json", "ipu:bow,gpu-model:a100-40gb"),
]


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    os.chdir(REPO)
    out = tempfile.mkdtemp(prefix="tilesim-overhead-")
    devnull = open(os.devnull, "w")
    print(f"{'workload':<16} {'backends':<36} {'exe ms':>9} {'cli ms':>9} {'python ms':>10} {'py/cli':>7} {'py/exe':>7}")
    for name, backends in CASES:
        path = str(REPO / "workloads" / "examples" / name)
        argv = ["run", path, "--backends", backends, "--out", out]
        exe = lambda: subprocess.run([EXE, *argv], stdout=devnull, stderr=devnull, check=True)  # noqa: E731
        def cli():
            saved = os.dup(1), os.dup(2)
            os.dup2(devnull.fileno(), 1)
            os.dup2(devnull.fileno(), 2)
            try:
                assert tilesim.cli(argv) == 0
            finally:
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
        workload = tilesim.Workload.from_json(path)
        py = lambda: tilesim.run(workload, backends=backends.split(","), out=out)  # noqa: E731
        for f in (exe, cli, py):  # warm: files cached, machine files read once
            f()
        times = {"exe": [], "cli": [], "python": []}
        for _ in range(args.repeats):
            times["exe"].append(timed(exe))
            times["cli"].append(timed(cli))
            times["python"].append(timed(py))
        m = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        print(f"{name:<16} {backends:<36} {m['exe']:9.2f} {m['cli']:9.2f} {m['python']:10.2f} {m['python'] / m['cli']:7.3f} "
              f"{m['python'] / m['exe']:7.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
