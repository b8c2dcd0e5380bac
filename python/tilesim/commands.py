"""The command line's other subcommands from Python, in this process, with the same checks, files and
messages and errors raised as ``tilesim.InputError`` and friends. ``fit``, ``placement``, ``calibrate``,
``backends``, ``validate``, ``calibrate_model`` and ``report`` call the library functions their commands call
(``tilesim._core.fit``, ...), the files a user asked for written by the command's own writer, and return
the result they hand back; the others run the C++ command itself (``tilesim._core.dispatch``), and what
it writes is read back and returned as data."""
import contextlib
import csv
import json
import os
import re
import shutil
import tempfile
import time

from . import _machine_axes, _native
from ._errors import Error, InputError
from .graph import Graph
from .workload import Workload


def _call(args, capture=True, quiet=False):
    code, text = _native.core.dispatch([str(a) for a in args], capture, quiet)
    if code != 0:
        raise Error(f"tilesim {' '.join(map(str, args))}: exit code {code} (see the messages above)", exit_code=code)
    return text


def cli(args, check=False):
    """Runs ``tilesim ARGS...`` in this process exactly as the executable does: output on this process's
    stdout and stderr, errors printed as ``tilesim: error: ...``; returns the exit code (``check=True``
    raises the error instead)."""
    if check:
        _call(args, capture=False)
        return 0
    code, _ = _native.core.cli([str(a) for a in args], False)
    return code


def version():
    """``tilesim --version``'s text."""
    return _native.core.version()


def _optional(flag, value):
    return [] if value is None or value is False else ([flag] if value is True else [flag, value])


def _repeated(flag, values):
    values = [values] if isinstance(values, str) else list(values or [])
    return [x for v in values for x in (flag, v)]


def _absolute_paths(document, source_file):
    """A workload document read from `source_file` with its relative file paths (the graph's, index
    files') made absolute, so that it reads the same from a file written anywhere else."""
    if not source_file or not isinstance(document, dict):
        return document
    base = os.path.dirname(os.path.abspath(source_file))

    def absolute(holder):
        if isinstance(holder, dict) and isinstance(holder.get("file"), str) and not os.path.isabs(holder["file"]):
            return dict(holder, file=os.path.normpath(os.path.join(base, holder["file"])))
        return holder

    document = dict(document)
    if "graph" in document:
        document["graph"] = absolute(document["graph"])
    if isinstance(document.get("ops"), list):
        document["ops"] = [dict(op, indices=absolute(op["indices"])) if isinstance(op, dict) and "indices" in op else op
                           for op in document["ops"]]
    return document


def _json_value(value, folder, written):
    """`value` (a sweep spec, or any part of it) as plain JSON: a ``Workload`` as its document inline
    (relative paths made absolute), a ``Graph`` as its object, an in-memory graph written into `folder`
    as Matrix Market (ids kept) and named by that file, other tilesim objects by their ``to_dict()``.
    `written` counts the graph files, so that no two share a name."""
    if isinstance(value, Graph):
        if not value.in_memory:
            return value.to_dict()
        written.append(os.path.join(folder, f"graph-{len(written)}.mtx"))
        return value.save(written[-1]).to_dict()
    if isinstance(value, Workload):
        document = _absolute_paths(value.to_dict(), value.source_file)
        if isinstance(value.graph, Graph) and value.graph.in_memory:
            document["graph"] = value.graph  # written to a file below
        return _json_value(document, folder, written)
    if hasattr(value, "to_dict"):
        return _json_value(value.to_dict(), folder, written)
    if isinstance(value, dict):
        return {k: _json_value(v, folder, written) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(v, folder, written) for v in value]
    return value


@contextlib.contextmanager
def _as_file(spec, what):
    """A path for a command that reads a file: `spec` itself, or a dict (which may hold ``Workload`` and
    ``Graph`` objects: a sweep's "workload", an axis's values) written to a temporary folder with any
    in-memory graph beside it as Matrix Market, removed when the command is done."""
    if isinstance(spec, (str, os.PathLike)):
        yield str(spec)
        return
    folder = tempfile.mkdtemp(prefix="tilesim-")
    try:
        document = _json_value(spec, folder, [])
        name = document.get("name", what) if isinstance(document, dict) else what
        usable = isinstance(name, str) and re.fullmatch(r"[A-Za-z0-9._-]{1,200}", name) and name not in (".", "..")
        path = os.path.join(folder, f"{name if usable else what}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(document, f, indent=2)
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


class Table:
    """Rows of a CSV file tilesim wrote: ``rows`` (dicts of strings), ``path``, ``to_pandas()``."""

    def __init__(self, path):
        self.path = path
        self.rows = _read_csv(path)

    def to_pandas(self):
        """The file as a DataFrame: numeric columns as numbers (int64 or float64, an empty cell NaN), the
        others as strings."""
        import pandas as pd
        return pd.read_csv(self.path)

    def __len__(self):
        return len(self.rows)

    def __repr__(self):
        columns = list(self.rows[0]) if self.rows else []
        return f"<tilesim.{type(self).__name__} {self.path!r}: {len(self.rows)} rows x {len(columns)} columns>"


class SweepResult(Table):
    """A sweep's results.csv (``rows``, ``to_pandas()``, ``frame``) and its folder (``out``, ``sweep`` =
    sweep.json)."""

    def __init__(self, out):
        super().__init__(os.path.join(out, "results.csv"))
        self.out = out
        self._frame = None
        with open(os.path.join(out, "sweep.json"), encoding="utf-8") as f:
            self.sweep = json.load(f)

    @property
    def frame(self):
        """The rows as a DataFrame (made on first use, then the same object): ``to_pandas()``, numeric
        columns typed, with the what-if machines read from the backend names. ``base_backend`` (after
        ``backend``) is the backend without its overrides ("ipu:bow{chip.sram_bytes_per_tile=1277952}" ->
        "ipu:bow", "gpu-model:a100-40gb{...}:eager" -> "gpu-model:a100-40gb:eager"); each figure a row's
        machine overrides is a column named by its path ("chip.sram_bytes_per_tile") holding the figure's
        value on the row's machine, and a figure scaled (``*=``, a ``{"scale": [...]}`` axis) also has
        "PATH scale", the factor. A scaled figure's value is the resolved machine's: from machines.json
        beside results.csv (an op sweep's), else read from each machine by a one-point timing-only run
        (a workload sweep writes no machines.json). Rows of a base backend that sets the figure on none of
        its machines hold NaN there."""
        if self._frame is None:
            self._frame = _machine_axes.add_machine_columns(self.to_pandas(), self.out, self.path)
        return self._frame

    def __repr__(self):
        backends = sorted({r.get("backend", "") for r in self.rows} - {""})
        ops = sorted({r.get("op", "") for r in self.rows} - {""})
        what = f", ops {ops}" if ops else ""
        return (f"<tilesim.SweepResult {self.sweep.get('name', os.path.basename(self.out))!r} in {self.out!r}: {len(self.rows)} rows, "
                f"backends {backends}{what}>")


def sweep(spec, out=None, *, jobs=None, resume=False, overwrite=False, backends=None, verify=False,
          available_memory_proportion=None, axes=None, zip=None, batch_sizes=None, batches=None, machine_axes=None,  # noqa: A002
          quiet=False):
    """``tilesim sweep``: every point of a sweep file (a path or a dict of docs/sweep-format.md) into
    ``out``/results.csv (default out/<sweep name>/, as the command line's). Returns a ``SweepResult``;
    the rows as a DataFrame are ``result.frame`` (numeric columns typed, the what-if machines' figures
    as columns).

    A workload sweep's ``"workload"`` may be a ``tilesim.Workload`` (written inline, an in-memory graph
    beside it as Matrix Market), and so may its axes' values hold ``Graph`` objects. ``spec`` may also be
    a ``Workload`` itself: its sweep over ``axes`` ({JSON path: values}, zipped per ``zip``), ``batch_sizes``
    and/or ``machine_axes`` on ``backends`` (``batches`` per point), named after the workload.

    ``machine_axes`` (a ``Workload`` only) sweeps figures of the backends' machine files, as an op sweep
    file's machine axes do (docs/sweep-format.md, "Machine axes"): each combination of the figures'
    values is a what-if machine that runs as a backend of its own
    ("ipu:bow{chip.exchange_bytes_per_cycle=4;chip.sram_bytes_per_tile*=0.5}"), in place of the backend.
    Either ``{figure path: axis}``, for every backend (each must name its machine: "ipu:bow", not "ipu"
    or "cpu"), or ``{backend: {figure path: axis}}`` for those backends only (its keys are among
    ``backends``; a key holding ':' is a backend's name, as no figure path holds one). An axis is a list
    of values (``[4, 8]``), ``{"scale": [0.5, 1, 2]}`` (factors on the base machine's value) or a range
    (``{"from": 1e9, "to": 4e9, "times": 2}``, ``{"from": 100, "to": 300, "step": 100}``). Without
    ``axes`` or ``batch_sizes`` the workload runs once per machine.

        r = tilesim.sweep(workload, backends=["ipu:bow"], machine_axes={
            "chip.sram_bytes_per_tile": {"scale": [0.5, 1, 2]}, "chip.exchange_bytes_per_cycle": [4, 8]})
        r.frame.pivot_table(index="chip.sram_bytes_per_tile", columns="chip.exchange_bytes_per_cycle", values="cycles")

    Progress goes to ``sys.stderr``; ``quiet=True`` leaves it out."""
    if isinstance(spec, Workload):
        if not (batch_sizes or axes or machine_axes) or not backends:
            raise InputError("sweep(Workload): expected axes={...}, batch_sizes=[...] or machine_axes={...}, and backends=[...] (a Workload "
                             f"is swept over its fields or its backends' machines, docs/sweep-format.md), found axes={axes!r}, "
                             f"batch_sizes={batch_sizes!r}, machine_axes={machine_axes!r}, backends={backends!r}")
        backends = [backends] if isinstance(backends, str) else list(backends)
        if machine_axes is not None:
            backends = _machine_axes.expand_backends(backends, machine_axes)
        suffix = "sweep" if axes else "batch_sizes" if batch_sizes else "machines"
        document = {"name": f"{spec.name}_{suffix}", "workload": spec, "backends": backends}
        if axes:
            document["axes"] = dict(axes)
        elif not batch_sizes:
            # A workload sweep needs an axis: over the machines alone, the workload's own name (one value).
            document["axes"] = {"name": [spec.name]}
        if zip:
            document["zip"] = [list(group) for group in zip]
        if batch_sizes:
            document["batch_sizes"] = list(batch_sizes)
        if batches is not None:
            document["batches"] = batches
        spec, backends = document, None
    elif any(v is not None for v in (axes, zip, batch_sizes, batches, machine_axes)):
        raise InputError("sweep: expected axes=, zip=, batch_sizes=, batches= and machine_axes= only with a Workload as the spec (a sweep "
                         f"file names its own), found axes={axes!r}, zip={zip!r}, batch_sizes={batch_sizes!r}, batches={batches!r}, "
                         f"machine_axes={machine_axes!r}")
    backends = ",".join(backends) if isinstance(backends, (list, tuple)) else backends
    with _as_file(spec, "sweep") as path:
        if out is None:
            with open(path, encoding="utf-8") as f:
                out = os.path.join("out", str(json.load(f).get("name", "sweep")))
        _call(["sweep", path, "--out", out] + _optional("--jobs", jobs) + _optional("--resume", resume) +
              _optional("--overwrite", overwrite) + _optional("--backends", backends) + _optional("--verify", verify) +
              _optional("--available-memory-proportion", available_memory_proportion), quiet=quiet)
    return SweepResult(str(out))


def validate(suite="all", out=None, *, plots=True, format=None):
    """``tilesim validate``: the suites (hydronet, layers, models or all) through the models; returns
    validation.json's content. ``format="markdown"`` or ``"latex"`` also writes validation.md / .tex."""
    out = out or os.path.join("out", "validation")
    # The files go into `out` as the command writes them; the answer is the result's, not the file's.
    return json.loads(_native.core.validate(str(suite), str(out), bool(plots), "text" if format is None else str(format)))


def _figures(args, results, out):
    out = out or os.path.join(os.path.dirname(str(results)) or ".", "plots")
    started = time.time()
    _call(args + ["--out", out])
    return Figures(out, since=started)


class Figures:
    """The files a plotting command wrote into ``out`` (PDF, SVG, PNG, the gnuplot scripts and their
    data): ``files``, those of one type (``of_type(".pdf")``) and the plotted data (``data()``)."""

    def __init__(self, out, since=0.0):
        self.out = out
        paths = (os.path.join(out, f) for f in os.listdir(out))
        # Written by this call: the folder may hold other commands' figures too.
        self.files = sorted(p for p in paths if os.path.isfile(p) and os.path.getmtime(p) >= since - 1.0)

    def of_type(self, extension):
        return [f for f in self.files if f.endswith(extension)]

    def __repr__(self):
        kinds = {}
        for f in self.files:
            ext = os.path.splitext(f)[1] or "(none)"
            kinds[ext] = kinds.get(ext, 0) + 1
        summary = ", ".join(f"{n} {ext}" for ext, n in sorted(kinds.items()))
        return f"<tilesim.Figures in {self.out!r}: {len(self.files)} files ({summary or 'none'})>"

    def data(self):
        """The plotted data, by file name: a .csv file's rows, and a gnuplot .dat file's rows as dicts
        named by its "# One data set per ...: COLUMNS" line, numbers as floats, each with the data set
        it belongs to (``"set"``: the comment line that opens it, such as ``"gather at tile_sram"``)."""
        tables = {}
        for f in self.files:
            if f.endswith(".csv"):
                tables[os.path.basename(f)] = _read_csv(f)
            elif f.endswith(".dat"):
                tables[os.path.basename(f)] = _read_gnuplot_data(f)
        return tables


def _read_gnuplot_data(path):
    columns, current, rows = None, None, []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            text = line.strip()
            if text.startswith("# One data set per") and ":" in text:
                columns = text.split(":", 1)[1].split()
            elif text.startswith("#") and columns is not None:
                current = text.lstrip("# ").strip()
            elif text and not text.startswith("#"):
                values = [float(v) for v in text.split()]
                names = columns if columns and len(columns) == len(values) else [f"column_{i + 1}" for i in range(len(values))]
                rows.append({"set": current, **dict(zip(names, values))})
    return rows


def roofline(results, machines=(), out=None):
    """``tilesim roofline RESULTS.csv``: rooflines with each machine's ceilings (``machines`` as
    ``"cpu:out/calibration/cpu.json"``, ...)."""
    return _figures(["roofline", results] + _repeated("--machine", machines), results, out)


def plot_surface(results, baselines, targets, *, x=None, y=None, average_over=None, ops=None, out=None, range=None):  # noqa: A002
    """``tilesim plot surface``: the targets' speedup over the baselines on the grid of two columns, (num_inputs x
    num_outputs) unless ``x`` and ``y`` name others (``"num_features"``, a workload sweep's ``"loader.batch_size"``)."""
    ops = ",".join(ops) if isinstance(ops, (list, tuple)) else ops
    average_over = ",".join(average_over) if isinstance(average_over, (list, tuple)) else average_over
    return _figures(["plot", "surface", results] + _repeated("--baseline", baselines) + _repeated("--target", targets) +
                    _optional("--x", x) + _optional("--y", y) + _optional("--average-over", average_over) +
                    _optional("--ops", ops) + _optional("--range", range), results, out)


def plot_throughput(results, out=None):
    """``tilesim plot throughput``: throughput versus batch size of a batch-size sweep."""
    return _figures(["plot", "throughput", results], results, out)


def report(results, format="markdown", *, baselines=(), targets=(), ops=None):  # noqa: A002
    """``tilesim report``: the speedup tables as text (markdown, latex, csv or summary)."""
    ops = ",".join(ops) if isinstance(ops, (list, tuple)) else ops
    def names(values):
        return [values] if isinstance(values, str) else [str(v) for v in (values or [])]
    # The library's text (analysis/speedup_report_text.hpp), as the command prints it.
    return _native.core.report(str(results), str(format), names(baselines), names(targets), ops or "")


def _workload_arguments(workload):
    """(document text, file, in-memory graphs) of a workload for the native module, as tilesim.run hands
    them over (``Workload.native_arguments``): a dict or a path becomes a Workload first, checked as
    ``tilesim run`` checks it."""
    if not isinstance(workload, Workload):
        workload = Workload.from_dict(workload) if isinstance(workload, dict) else Workload.from_json(workload)
    return workload.native_arguments()


def fit(workload, backend="ipu:bow", *, sample_batches=None):
    """``tilesim fit``: the largest batch of a loader workload that fits the simulated IPU (as a dict)."""
    document, file, graphs = _workload_arguments(workload)
    return json.loads(_native.core.fit(document, file, graphs, str(backend), sample_batches))


def _graph_source(workload):
    """(document text or None, file, in-memory graphs) of the workload placement reads its graph from:
    placement reads only "graph", "seed" and "num_features", so a path or a dict need not be a whole
    workload. A path is read by the native reader (document None), as the command line reads it."""
    if workload is None:
        return None, "", {}
    if isinstance(workload, (str, os.PathLike)):
        return None, str(workload), {}
    if isinstance(workload, Workload):
        return workload.native_arguments()
    try:
        return json.dumps(workload, allow_nan=False), "", {}
    except (TypeError, ValueError) as e:
        raise InputError(f"workload: expected values JSON can hold, found {e}") from None


def placement(workload=None, *, graph=None, features=None, dtype=None, machine=None, symmetrize=False, seed=None):
    """``tilesim placement``: one message-passing step's exchange under linear, RCM and METIS placements."""
    document, file, graphs = _graph_source(workload)
    options = {"graph": None if graph is None else str(graph), "features": features, "dtype": None if dtype is None else str(dtype),
               "machine": None if machine is None else str(machine), "symmetrize": bool(symmetrize), "seed": seed}
    return json.loads(_native.core.placement(document, file, graphs, options))


def calibrate(out=None):
    """``tilesim calibrate``: this host's ceilings as a CPU machine file, written to ``out`` (default
    out/calibration/cpu.json) and returned as a dict."""
    return json.loads(_native.core.calibrate("" if out is None else str(out)))


def calibrate_model(*, gpu=None, ipu=None, data=None, write=False):
    """``tilesim calibrate-model``: a model's free figures fitted on the calibration half (as a dict)."""
    def text(value):
        return "" if value is None else str(value)
    return json.loads(_native.core.calibrate_model(text(gpu), text(ipu), text(data), bool(write)))


def backends():
    """``tilesim backends --json``: the backend families, their modes and machines, built or not."""
    return json.loads(_native.core.backends())
