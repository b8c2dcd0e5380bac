"""Machine axes of a ``Workload`` sweep, and the what-if machines of a sweep's rows as columns.

A workload sweep file takes backend names only (what-if machines named one by one,
docs/sweep-format.md, "Workload sweeps"), so ``tilesim.sweep(workload, machine_axes=...)`` makes those
names here, as an op sweep's machine axes make them (workloads/sweep_machine_axes.cpp): the figures in
alphabetical order of their path, the last one varying fastest, each value written as the C++ writes it,
"ipu:bow{chip.exchange_bytes_per_cycle=4;chip.sram_bytes_per_tile*=0.5}". Whether a path names a figure of
the machine and whether a value is one the model accepts is the engine's to say, when the sweep makes
its backends (before any point runs).

``SweepResult.frame`` reads such names back (common/machine_overrides.hpp's syntax): the base backend
and, per overridden figure, its value on the row's machine."""
import decimal
import json
import math
import os
import re
import warnings

from ._errors import Error, InputError

MAX_MACHINES_PER_BACKEND = 10000  # as an op sweep's machine axes (runs/sweep: max machines per entry)
MAX_AXIS_VALUES = 100000
_FIGURE_PATH = re.compile(r"[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*")


def _describe(value):
    return json.dumps(value) if isinstance(value, (str, bool)) or value is None else repr(value)


def figure_number_text(v):
    """A value as a machine name writes it (workloads/sweep_machine_axes.cpp figure_number_text): a whole
    value below 1e15 as an integer, any other as the shortest text that reads back the same, fixed or
    exponent form whichever is shorter (fixed on a tie, as std::to_chars)."""
    v = float(v)
    if v == math.floor(v) and abs(v) < 1e15:
        return str(int(v))
    d = decimal.Decimal(repr(v))
    sign, digits, exponent = d.as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + exponent  # the decimal point after this many digits of `text`
    if point <= 0:
        fixed = "0." + "0" * -point + text
    elif point >= len(text):
        fixed = text + "0" * (point - len(text))
    else:
        fixed = text[:point] + "." + text[point:]
    e = point - 1
    scientific = (text[0] + ("." + text[1:] if len(text) > 1 else "") + ("e-" if e < 0 else "e+") + f"{abs(e):02d}")
    return ("-" if sign else "") + (fixed if len(fixed) <= len(scientific) else scientific)


def _number(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{where}: expected a finite number, found {_describe(value)}")
    return float(value)


def _listed(values, where):
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise InputError(f"{where}: expected a non-empty list of numbers, found {_describe(values)}")
    values = list(values)
    if not values:
        raise InputError(f"{where}: expected a non-empty list of numbers, found a list of 0")
    out, seen = [], set()
    for i, v in enumerate(values):
        x = _number(v, f"{where}[{i}]")
        if x in seen:
            raise InputError(f"{where}[{i}]: expected each value once, found {figure_number_text(x)} twice")
        seen.add(x)
        out.append(x)
    return out


def _ranged(axis, where):
    unknown = sorted(set(axis) - {"from", "to", "times", "step"})
    if unknown:
        raise InputError(f"{where}: expected the keys \"from\", \"to\" and \"times\" or \"step\" of a range (or \"scale\"), found {unknown[0]!r}")
    for key in ("from", "to"):
        if key not in axis:
            raise InputError(f"{where}: expected a range's \"{key}\", found none")
    start, end = _number(axis["from"], f"{where}.from"), _number(axis["to"], f"{where}.to")
    if end < start:
        raise InputError(f"{where}.to: expected a number >= from ({figure_number_text(start)}), found {figure_number_text(end)}")
    if ("times" in axis) == ("step" in axis):
        raise InputError(f"{where}: expected exactly one of \"times\" (a geometric range) and \"step\" (an arithmetic range), "
                         f"found {'both' if 'times' in axis else 'neither'}")
    values = []
    if "times" in axis:
        factor = _number(axis["times"], f"{where}.times")
        if not 1.0 < factor <= 1e6:
            raise InputError(f"{where}.times: expected a number above 1 and at most 1e6, found {figure_number_text(factor)}")
        if not start > 0:
            raise InputError(f"{where}.from: expected a number above 0 for a geometric range, found {figure_number_text(start)}")
        for k in range(MAX_AXIS_VALUES + 1):
            x = start * factor ** k
            if x > end * (1 + 1e-12):
                break
            values.append(x)
    else:
        stride = _number(axis["step"], f"{where}.step")
        if not stride > 0:
            raise InputError(f"{where}.step: expected a number above 0, found {figure_number_text(stride)}")
        for k in range(MAX_AXIS_VALUES + 1):
            x = start + stride * k
            if x > end + stride * 1e-9:
                break
            values.append(x)
    if len(values) > MAX_AXIS_VALUES:
        raise InputError(f"{where}: expected a range of at most {MAX_AXIS_VALUES} values, found more")
    return values


def _figure_axis(path, axis, where):
    """(scale, values) of one figure's axis: a list of values, {"scale": [factors]} or a range."""
    if isinstance(axis, dict):
        if "scale" in axis:
            if len(axis) != 1:
                raise InputError(f"{where}: expected {{\"scale\": [factors]}} alone, found the keys {sorted(axis)}")
            return True, _listed(axis["scale"], f"{where}.scale")
        return False, _ranged(axis, where)
    if isinstance(axis, (str, bytes, int, float)) or axis is None or not hasattr(axis, "__iter__"):
        raise InputError(f"{where}: expected a list of values, {{\"scale\": [factors]}} or a range "
                         f"{{\"from\", \"to\", \"times\" or \"step\"}}, found {_describe(axis)}")
    return False, _listed(axis, where)


def machine_variants(axes, where):
    """The override lists ("{chip.a=1;chip.b*=2}") of every combination of the figure axes `axes`
    ({figure path: axis}), in the op sweep's order: paths alphabetical, the last one fastest."""
    if not isinstance(axes, dict) or not axes:
        raise InputError(f"{where}: expected a dict of machine figures to sweep ({{\"chip.sram_bytes_per_tile\": [...]}}), "
                         f"found {_describe(axes)}")
    figures, count = [], 1
    for path in sorted(axes):
        at = f"{where}[{path!r}]"
        if not isinstance(path, str) or not _FIGURE_PATH.fullmatch(path):
            raise InputError(f"{at}: expected a figure's JSON path in the machine file (letters, digits, '_', dots: "
                             f"\"chip.num_tiles\"), found {_describe(path)}")
        scale, values = _figure_axis(path, axes[path], at)
        figures.append((path, scale, values))
        count *= len(values)
        if count > MAX_MACHINES_PER_BACKEND:
            raise InputError(f"{where}: expected at most {MAX_MACHINES_PER_BACKEND} machines (the axes crossed), found more")
    variants = [""]
    for path, scale, values in figures:
        variants = [f"{v};{path}{'*=' if scale else '='}{figure_number_text(x)}".lstrip(";") for v in variants for x in values]
    return ["{" + v + "}" for v in variants]


def with_overrides(backend, overrides, where, hint=""):
    """"ipu:bow" + "{...}" -> "ipu:bow{...}"; "gpu-model:a100-40gb:eager" -> "gpu-model:a100-40gb{...}:eager"."""
    first = backend.find(":")
    if first < 0 or first + 1 == len(backend):
        raise InputError(f"{where}: expected a backend that names its machine (\"ipu:bow\", \"gpu-model:a100-40gb\") for "
                         f"machine axes, found {_describe(backend)}{hint}")
    if "{" in backend:
        raise InputError(f"{where}: expected a backend without what-if overrides for machine axes (the axes make them), "
                         f"found {_describe(backend)}")
    second = backend.find(":", first + 1)
    return backend + overrides if second < 0 else backend[:second] + overrides + backend[second:]


def expand_backends(backends, machine_axes):
    """`backends` with each one that `machine_axes` sweeps replaced by its what-if machines, in place.

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
    expanded = []
    for b in backends:
        if b not in per_backend:
            expanded.append(b)
            continue
        where = f"machine_axes[{b!r}]" if named else "machine_axes"
        hint = "" if named else " among backends (machine_axes={backend: {figure path: axis}} sweeps some backends only)"
        with_overrides(b, "", where, hint)  # the backend's name checked before its axes
        expanded.extend(with_overrides(b, v, where) for v in machine_variants(per_backend[b], where))
    return expanded


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
    """backend -> its resolved machine's figures (machine_provenance.figures) for each of `backends`:
    read from the sweep's machines.json (an op sweep writes one), else from a one-point timing-only run
    of each machine (a workload sweep writes none; milliseconds each once the engine is up). A machine
    the run refuses is left out, with a warning."""
    backends = sorted(set(backends))
    found = {}
    path = os.path.join(out, "machines.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for entry in json.load(f).get("backends", []):
                found[entry.get("backend")] = entry.get("machine_provenance", {}).get("figures", {})
    missing = [b for b in backends if b not in found]
    if missing:
        from .run import run
        from .workload import Op, Workload
        probe = Workload("machine_figures", ops=[Op("gather", num_inputs=1, num_features=1, num_outputs=1)])
        try:
            report = run(probe, backends=missing, timing_only=True, outputs=False, quiet=True).report
        except Error as e:
            report = getattr(getattr(e, "result", None), "report", {"results": []})
            warnings.warn(f"SweepResult.frame: the figures of some what-if machines could not be read ({e}); their columns are NaN",
                          stacklevel=3)
        for r in report.get("results", []):
            found[r["backend"]] = r.get("machine_provenance", {}).get("figures", {})
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
