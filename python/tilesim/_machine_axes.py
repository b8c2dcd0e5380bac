"""Machine axes of a ``Workload`` sweep, and the what-if machines of a sweep's rows as columns.

``tilesim.sweep(workload, machine_axes=...)`` hands the axes to the sweep file's backend entries,
``{"backend": NAME, "machine": {PATH: AXIS}}`` (docs/sweep-format.md, "Machine axes"), where the
command makes one what-if backend per combination and checks every path and value before any point
runs; here only the dict's two forms are told apart.

``SweepResult.frame`` reads the rows' backend names back (common/machine_overrides.hpp's syntax,
"ipu:bow{chip.exchange_bytes_per_cycle=4;chip.sram_bytes_per_tile*=0.5}"): the base backend and, per
overridden figure, its value on the row's machine, from the machines.json every sweep writes."""
import json
import math
import os
import re
import warnings

from ._errors import InputError

_FIGURE_PATH = re.compile(r"[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*")


def _describe(value):
    return json.dumps(value) if isinstance(value, (str, bool)) or value is None else repr(value)


def _check_sweepable(backend, where, hint=""):
    """A backend whose machine can be swept: it names its machine and carries no overrides yet."""
    first = backend.find(":") if isinstance(backend, str) else -1
    if first < 0 or first + 1 == len(backend):
        raise InputError(f"{where}: expected a backend that names its machine (\"ipu:bow\", \"gpu-model:a100-40gb\") for "
                         f"machine axes, found {_describe(backend)}{hint}")
    if "{" in backend:
        raise InputError(f"{where}: expected a backend without what-if overrides for machine axes (the axes make them), "
                         f"found {_describe(backend)}")


def expand_backends(backends, machine_axes):
    """`backends` as a sweep file's entries, each one that `machine_axes` sweeps as {"backend": NAME,
    "machine": {figure path: axis}} (the command makes its what-if machines and checks the axes).

    ``machine_axes`` is {figure path: axis} for every backend, or {backend: {figure path: axis}} for
    some of them: the second when every key is among `backends` or holds ':' (a figure path never does)."""
    if not isinstance(machine_axes, dict) or not machine_axes:
        raise InputError("machine_axes: expected a dict: {figure path: axis} for every backend, or {backend: {figure path: axis}}, "
                         f"found {_describe(machine_axes)}")
    named = [k for k in machine_axes if isinstance(k, str) and (k in backends or ":" in k)]
    if named and len(named) != len(machine_axes):
        other = next(k for k in machine_axes if k not in named)
        raise InputError(f"machine_axes: expected either figure paths for every backend or backend names (among {backends}), "
                         f"not both, found {_describe(named[0])} and {_describe(other)}")
    if named:
        for name in named:
            if name not in backends:
                raise InputError(f"machine_axes[{name!r}]: expected a backend among backends={backends}, found {_describe(name)}")
        per_backend = machine_axes
    else:
        per_backend = {b: machine_axes for b in backends}
    entries = []
    for b in backends:
        if b not in per_backend:
            entries.append(b)
            continue
        axes = per_backend[b]
        where = f"machine_axes[{b!r}]" if named else "machine_axes"
        _check_sweepable(b, where, "" if named else " among backends (machine_axes={backend: {figure path: axis}} sweeps some backends only)")
        if not isinstance(axes, dict) or not axes:
            raise InputError(f"{where}: expected a dict {{figure path: axis}}, found {_describe(axes)}")
        entries.append({"backend": b, "machine": dict(axes)})
    return entries


_OVERRIDDEN = re.compile(r"^(?P<pre>[^{}]*)\{(?P<body>[^{}]*)\}(?P<post>[^{}]*)$")


def split_backend(backend, where):
    """(base backend, [(path, scale, value)]) of a row's backend name: "ipu:bow{chip.a=1;chip.b*=2}:x" ->
    ("ipu:bow:x", [("chip.a", False, 1.0), ("chip.b", True, 2.0)]); a name without braces is its own base."""
    if "{" not in backend and "}" not in backend:
        return backend, []
    m = _OVERRIDDEN.match(backend)
    if not m:
        raise InputError(f"{where}: expected a what-if machine NAME{{PATH=VALUE;PATH*=FACTOR}}, found {_describe(backend)}")
    overrides = []
    for part in m.group("body").split(";"):
        scale = "*=" in part
        path, sep, text = part.partition("*=" if scale else "=")
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not sep or not _FIGURE_PATH.fullmatch(path) or not math.isfinite(value):
            raise InputError(f"{where}: expected PATH=VALUE or PATH*=FACTOR in what-if machine {_describe(backend)}, found {_describe(part)}")
        overrides.append((path, scale, value))
    return m.group("pre") + m.group("post"), overrides


def _figure_value(figures, path):
    node = figures
    for key in path.split("."):
        if not isinstance(node, dict) or key not in node:
            return math.nan
        node = node[key]
    value = node.get("value") if isinstance(node, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def resolved_figures(out, backends):
    """backend -> its resolved machine's figures (machine_provenance.figures) for each of `backends`, from
    the machines.json beside the sweep's results.csv. A machine it does not list is left out, with a warning."""
    found = {}
    path = os.path.join(out, "machines.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for entry in json.load(f).get("backends", []):
                found[entry.get("backend")] = (entry.get("machine_provenance") or {}).get("figures", {})
    missing = sorted(set(backends) - set(found))
    if missing:
        warnings.warn(f"SweepResult.frame: {path} lists no machine for {missing}; their scaled figures' columns are NaN", stacklevel=3)
    return {b: found[b] for b in backends if b in found}


def add_machine_columns(frame, out, results_file):
    """`frame` (a sweep's rows) with a ``base_backend`` column after ``backend`` and, for every figure a
    row's what-if machine overrides, a column named by its path holding the figure's value on the row's
    machine (a `*=` override's resolved value), and for a figure some row scales, ``PATH scale`` holding
    the factor of the rows that scale it. Rows of a base backend that overrides the figure nowhere hold
    NaN in its columns."""
    if "backend" not in frame.columns:
        return frame
    names = [str(b) for b in frame["backend"]]
    parsed = {b: split_backend(b, f"{results_file}: backend") for b in set(names)}
    paths, scaled, swept_by_base = [], set(), {}
    for b in names:
        base, overrides = parsed[b]
        for path, scale, _ in overrides:
            if path not in paths:
                paths.append(path)
            if scale:
                scaled.add(path)
            swept_by_base.setdefault(base, set()).add(path)
    position = list(frame.columns).index("backend") + 1
    frame.insert(position, "base_backend", [parsed[b][0] for b in names])
    if not paths:
        return frame
    # A value the name does not give (a `*=` override, a figure another machine of the base sets) is the
    # resolved machine's.
    def named_values(b):
        return {path for path, scale, _ in parsed[b][1] if not scale}
    to_resolve = {b for b in set(names) if swept_by_base.get(parsed[b][0], set()) - named_values(b)}
    figures = resolved_figures(out, to_resolve) if to_resolve else {}
    for path in paths:
        column = path if path not in frame.columns else f"{path} (machine)"
        values, factors = [], []
        for b in names:
            base, overrides = parsed[b]
            mine = {p: (s, v) for p, s, v in overrides}
            if path not in swept_by_base.get(base, ()):
                values.append(math.nan)
                factors.append(math.nan)
            elif path in mine and not mine[path][0]:
                values.append(mine[path][1])
                factors.append(math.nan)
            else:
                values.append(_figure_value(figures.get(b, {}), path))
                factors.append(mine[path][1] if path in mine else math.nan)
        frame[column] = values
        if path in scaled:
            frame[f"{column} scale"] = factors
    return frame
