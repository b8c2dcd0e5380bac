"""tilesim.run: ``tilesim run`` in this process, on a Workload with in-memory graphs and values."""
import json
import numbers
import os
import warnings

import numpy as np

from . import _native
from ._arrays import is_torch, like_input, to_numpy
from ._errors import DoesNotFitError, InputError
from .workload import Workload

# Layer kinds of a model's groups (the report's per-layer totals): the model's output is its last one's.
_LAYER_KINDS = ("gcn", "sage", "gin", "gin_linear", "gat", "gat_per_edge", "schnet", "rgcn", "linear", "pool", "film", "cgconv")


class Result:
    """What ``tilesim run`` reports: ``report`` is report.json's content (``to_json()`` its text), ``table``
    the table the command line prints, ``outputs[backend][tensor]`` the values each backend computed
    (torch tensors when the inputs were, else numpy arrays), ``output[backend]`` the model's output,
    ``summary()`` the times per backend and layer as a tidy DataFrame, ``refused`` the backends that
    refused the workload (backend -> why), and ``exit_code`` the command line's (1 when an output was
    not verified: a defect of tilesim; 3 when a backend refused the workload)."""

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

    @property
    def refused(self):
        """backend -> the reason it refused the workload (``"does not fit: ..."``), for the backends that
        did not run; empty when every backend ran."""
        return {r["backend"]: r["refused"] for r in self.report["results"] if r.get("status") == "refused"}

    @property
    def ran(self):
        """The backends that ran (every backend but the refused ones), in the order given."""
        return [r["backend"] for r in self.report["results"] if r.get("status") != "refused"]

    def output_name(self):
        """The name of the model's output tensor (the last layer's last op), or of the last op's output
        for a workload of plain ops."""
        for r in self.report["results"]:
            ops = [op for op in r.get("ops", []) if "phase" not in op]  # not the rows of whole training phases
            if not ops:
                continue  # a refused backend, or one that reports whole phases alone
            layers = [g for g in r.get("groups", []) if g.get("kind") in _LAYER_KINDS and not g["name"].endswith(".grad")]
            last = layers[-1]["first_op"] + layers[-1]["ops"] - 1 if layers else len(ops) - 1
            return ops[last]["op"] + ".out"
        raise KeyError("the model's output: no backend reports per-op rows to find it from (see Result.outputs)")

    @property
    def output(self):
        """backend -> the model's output (the last layer's output; a plain-op workload's last op's), for
        each backend that computed values (a model that predicts times computes none). A training run's
        is its first step's forward output."""
        name = self.output_name()
        return {b: tensors[name] for b, tensors in self.outputs.items() if name in tensors}

    def summary(self, baseline=None):
        """A tidy pandas DataFrame of the run's times: one row per backend and layer (a ``"(total)"`` row
        per backend for its whole time; a workload of plain ops has one row per op), plain columns:

        ``backend``, ``kind`` (simulated, measured or modeled: what the number is), ``mode`` (the
        backend's mode or machine as its name gives it, "" when none), ``status`` ("ran" or "refused"),
        ``layer``, ``layer_kind``, ``time_s``, ``share`` (of the backend's total), ``baseline`` and
        ``speedup`` (the baseline's time for the same row over this one's: above 1 is faster than the
        baseline). ``baseline`` defaults to the first backend that ran. A refused backend has one
        ``"(total)"`` row with no times and its reason in ``refused``."""
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError("Result.summary needs pandas (Debian: python3-pandas)") from e
        ran = self.ran
        if baseline is None:
            baseline = ran[0] if ran else None
        elif baseline not in ran:
            raise KeyError(f"summary(baseline={baseline!r}): expected one of the backends that ran ({', '.join(ran)}), found {baseline!r}")
        rows = []
        for r in self.report["results"]:
            backend = r["backend"]
            mode = backend.split(":", 1)[1] if ":" in backend else ""
            common = {"backend": backend, "kind": r.get("kind"), "mode": mode}
            if r.get("status") == "refused":
                rows.append({**common, "status": "refused", "layer": "(total)", "layer_kind": "total", "time_s": None, "share": None,
                             "refused": r["refused"]})
                continue
            total = r.get("time_s")
            parts = [(g["name"], g["kind"], g["time_s"]) for g in r.get("groups", [])]
            if not parts:
                parts = [(op["op"], op.get("op_kind"), op["time_s"]) for op in r.get("ops", [])]
            for name, kind, time_s in parts + [("(total)", "total", total)]:
                rows.append({**common, "status": "ran", "layer": name, "layer_kind": kind, "time_s": time_s,
                             "share": time_s / total if total else None, "refused": None})
        frame = pd.DataFrame(rows, columns=["backend", "kind", "mode", "status", "layer", "layer_kind", "time_s", "share", "refused"])
        base = {row["layer"]: row["time_s"] for row in rows if row["backend"] == baseline}
        frame["baseline"] = baseline
        frame["speedup"] = [base[layer] / t if t and base.get(layer) else None for layer, t in zip(frame["layer"], frame["time_s"])]
        return frame

    def to_pandas(self):
        """The per-op rows as a pandas DataFrame, every field of the report's op entries flattened into
        columns (pandas must be installed: python3-pandas). ``summary()`` is the tidy view of the times."""
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError("Result.to_pandas needs pandas (Debian: python3-pandas)") from e
        return pd.json_normalize(self.rows())

    def __repr__(self):
        report = self.report
        name = report.get("workload", {}).get("name", "?")
        parts = []
        for r in report["results"]:
            if r.get("status") == "refused":
                parts.append(f"{r['backend']} refused")
            else:
                parts.append(f"{r['backend']} {r.get('kind')} {_time_text(r.get('time_s'))}")
        return f"<tilesim.Result {name!r}: {'; '.join(parts)}; exit_code={self.exit_code}>"


def _time_text(seconds):
    """A time with a unit read at a glance, as the command line's table writes it."""
    if seconds is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _backend_text(backends):
    if isinstance(backends, str):
        return backends
    return ",".join(backends)


def run(workload, backends=("ipu", "cpu"), *, out=None, timing_only=False, trace=None, seed=None, warmup=None, repeats=None,
        steps=None, batches=None, values=None, outputs=True, available_memory_proportion=None, weights_layout=None, quiet=False):
    """Runs ``workload`` (a Workload, or the path of a workload file) on ``backends`` as ``tilesim run``
    does, in this process, and returns a Result.

    ``out``: the folder report.json is written to (default: none kept; the command line's default is
    out/<name>/). ``values``: name -> tensor or array overriding generated inputs (``"x"``, a layer's
    ``"conv1.weight"``, ...; float32, the input's shape); a graph's ``x`` is fed to ``"x"`` unless
    ``values`` names it. ``outputs=False`` skips copying the computed values back. The other options
    are the command line's (``--timing-only``, ``--trace``, ``--seed``, ``--available-memory-proportion``, ...).

    ``weights_layout``: how 2-D weights in ``values`` (names ending in ``weight``) are laid out:
    ``"tilesim"`` is ``[in, out]`` (x @ W), ``"pyg"`` is PyG's / torch.nn.Linear's ``[out, in]`` (each is
    transposed on the way in). Left out, a square weight is refused as ambiguous and a non-square one is
    taken as tilesim's; a PyG-shaped one is then refused by the shape check with a pointer to this option.

    ``quiet=True``: no progress lines (they go to ``sys.stderr`` otherwise, as the command line's go to
    its standard error).

    Raises ``tilesim.DoesNotFitError`` when a backend refuses the workload (exit code 3); when the other
    backends ran, the error's ``result`` is the run's ``Result`` (their numbers, ``result.refused``)."""
    if weights_layout not in (None, "tilesim", "pyg"):
        raise InputError(f"weights_layout: expected \"tilesim\" ([in, out]) or \"pyg\" ([out, in]), found {weights_layout!r}")
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
    for name, array in list(arrays.items()):
        if not (name.endswith("weight") and array.ndim == 2):
            continue
        if weights_layout is None and array.shape[0] == array.shape[1]:
            raise InputError(f"values.{name}: expected weights_layout=\"tilesim\" ([in, out]) or \"pyg\" ([out, in]) for a square weight, "
                             f"whose layout its shape cannot tell, found a [{array.shape[0]}, {array.shape[1]}] weight and no weights_layout")
        if weights_layout == "pyg":
            arrays[name] = np.ascontiguousarray(array.T)
    if available_memory_proportion is not None and (isinstance(available_memory_proportion, bool) or
                                                    not isinstance(available_memory_proportion, numbers.Real)):
        raise InputError("available_memory_proportion: expected a number greater than 0 and at most 1, "
                         f"found {available_memory_proportion!r}")
    document, file, graphs = workload.native_arguments()
    options = {"backends": _backend_text(backends), "out_dir": str(out) if out is not None else "", "timing_only": bool(timing_only),
               "trace": str(trace or ""), "warmup": warmup, "repeats": repeats, "seed": seed, "steps": steps, "batches": batches,
               "available_memory_proportion": None if available_memory_proportion is None else float(available_memory_proportion),
               "quiet": bool(quiet)}
    try:
        code, table, text, computed = _native.core.run(document, file, graphs, arrays, options, bool(outputs))
    except InputError as e:
        raise _with_layout_hint(e, arrays, weights_layout) from None
    report_path = os.path.join(str(out), "report.json") if out is not None else None
    result_outputs = {b: {n: like_input(a, torch_out) for n, a in tensors.items()} for b, tensors in computed.items()}
    result = Result(text, table, result_outputs, code, report_path)
    if code == 3 and result.refused:
        why = "; ".join(f"{b}: {m}" for b, m in result.refused.items())
        raise DoesNotFitError(f"{why} (the other backends ran: {', '.join(result.ran)}; their result is this error's .result)", result)
    if code != 0:
        warnings.warn(f"tilesim.run: exit code {code}: an output was not verified or the backends disagree (see Result.report)",
                      RuntimeWarning, stacklevel=2)
    return result


def _with_layout_hint(error, arrays, weights_layout):
    """A shape error of a 2-D weight given without weights_layout, with the pointer a PyG user needs."""
    name = error.json_path[len("values."):] if error.json_path.startswith("values.") else ""
    array = arrays.get(name)
    if weights_layout is None and array is not None and array.ndim == 2 and name.endswith("weight") and "expected an array of shape" in str(error):
        message = (f"{error} (tilesim's weights are [in, out]; a PyG / torch.nn.Linear weight is [out, in]: "
                   "pass weights_layout=\"pyg\" to have it transposed)")
        return InputError(message, error.file, error.json_path)
    return error
