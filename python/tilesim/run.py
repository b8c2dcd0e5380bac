"""tilesim.run: ``tilesim run`` in this process, on a Workload with in-memory graphs and values."""
import json
import os
import shutil
import tempfile
import warnings

import numpy as np

from . import _native
from ._arrays import is_torch, like_input, to_numpy
from ._errors import InputError
from .workload import Workload


class Result:
    """What ``tilesim run`` reports: ``report`` is report.json's content (``to_json()`` its text), ``table``
    the table the command line prints, ``outputs[backend][tensor]`` the values each backend computed
    (torch tensors when the inputs were, else numpy arrays), and ``exit_code`` the command line's (1 when
    an output was not verified: a defect of tilesim)."""

    def __init__(self, report_text, table, outputs, exit_code, report_path):
        self._text = report_text
        self._report = None  # parsed on first use: a report with its machines' provenance is large
        self.table = table
        self.outputs = outputs
        self.exit_code = exit_code
        self.report_path = report_path  # None when the report was not kept (run(..., out=None))

    @property
    def report(self):
        """report.json's content (parsed on first use)."""
        if self._report is None:
            self._report = json.loads(self._text)
        return self._report

    def to_json(self):
        """report.json's text, as ``tilesim run`` writes it."""
        return self._text

    @property
    def backends(self):
        return [r["backend"] for r in self.report["results"]]

    def result(self, backend):
        """The report's entry of one backend."""
        for r in self.report["results"]:
            if r["backend"] == backend:
                return r
        raise KeyError(f"{backend}: not among {self.backends}")

    def rows(self):
        """Per-op rows of every backend: each op's report entry with its backend's name and mode."""
        rows = []
        for r in self.report["results"]:
            for op in r.get("ops", []):
                rows.append({"backend": r["backend"], "kind": r.get("kind"), **op})
        return rows

    def groups(self):
        """Per-layer totals of every backend (a layer is several ops)."""
        return [{"backend": r["backend"], **g} for r in self.report["results"] for g in r.get("groups", [])]

    @property
    def losses(self):
        """backend -> the loss of each training step (None where a model computes none)."""
        return {r["backend"]: r["training"].get("loss") for r in self.report["results"] if "training" in r}

    @property
    def verified(self):
        return self.exit_code == 0

    def to_pandas(self):
        """The per-op rows as a pandas DataFrame (pandas must be installed: python3-pandas)."""
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError("Result.to_pandas needs pandas (Debian: python3-pandas)") from e
        return pd.json_normalize(self.rows())

    def __repr__(self):
        return f"Result(exit_code={self.exit_code}, backends={self.backends})"


def _backend_text(backends):
    if isinstance(backends, str):
        return backends
    return ",".join(backends)


def run(workload, backends=("ipu", "cpu"), *, out=None, timing_only=False, trace=None, seed=None, warmup=None, repeats=None,
        steps=None, batches=None, values=None, outputs=True, available_memory_proportion=None):
    """Runs ``workload`` (a Workload, or the path of a workload file) on ``backends`` as ``tilesim run``
    does, in this process, and returns a Result.

    ``out``: the folder report.json is written to (default: none kept; the command line's default is
    out/<name>/). ``values``: name -> tensor or array overriding generated inputs (``"x"``, a layer's
    ``"conv1.weight"``, ...; float32, the input's shape); a graph's ``x`` is fed to ``"x"`` unless
    ``values`` names it. ``outputs=False`` skips copying the computed values back. The other options
    are the command line's (``--timing-only``, ``--trace``, ``--seed``, ``--available-memory-proportion``, ...)."""
    if not isinstance(workload, Workload):
        workload = Workload.from_json(workload)
    values = dict(values or {})
    torch_out = any(is_torch(v) for v in values.values())
    graph = workload.graph
    if graph is not None and getattr(graph, "x", None) is not None and "x" not in values and workload.loader is None:
        values["x"] = graph.x
        torch_out = torch_out or is_torch(graph.x)
    torch_out = torch_out or bool(getattr(graph, "from_torch", False))
    arrays = {name: to_numpy(v, np.float32, f"values.{name}") for name, v in values.items()}
    for name in arrays:
        if not isinstance(name, str):
            raise InputError(f"values: expected tensor names (strings), found {name!r}")
    document, file, graphs = workload.native_arguments()
    out_dir = str(out) if out is not None else tempfile.mkdtemp(prefix="tilesim-run-")
    options = {"backends": _backend_text(backends), "out_dir": out_dir, "timing_only": bool(timing_only), "trace": str(trace or ""),
               "warmup": warmup, "repeats": repeats, "seed": seed, "steps": steps, "batches": batches,
               "available_memory_proportion": None if available_memory_proportion is None else str(available_memory_proportion)}
    try:
        code, table, computed = _native.core.run(document, file, graphs, arrays, options, bool(outputs))
        report_path = os.path.join(out_dir, "report.json")
        with open(report_path, encoding="utf-8") as f:
            text = f.read()
    finally:
        if out is None:
            shutil.rmtree(out_dir, ignore_errors=True)
    if out is None:  # the table's last line names the report, which was not kept
        table = table.replace(f"report: {os.path.join(out_dir, 'report.json')}\n", "report: not kept (tilesim.run(..., out=None))\n")
    result_outputs = {b: {n: like_input(a, torch_out) for n, a in tensors.items()} for b, tensors in computed.items()}
    if code != 0:
        warnings.warn(f"tilesim.run: exit code {code}: an output was not verified or the backends disagree (see Result.report)",
                      RuntimeWarning, stacklevel=2)
    return Result(text, table, result_outputs, code, report_path if out is not None else None)
