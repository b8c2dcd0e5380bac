"""Machines: the machine files tilesim ships (docs/machine-format.md), each figure with its value and
the source it came from."""
import json

from .commands import _call


def machines():
    """``tilesim machines --json``: every machine file with its key figures (a list of dicts)."""
    return json.loads(_call(["machines", "--json"]))


class Figure:
    """One figure of a machine file: ``value`` and ``source`` (where it came from: vendor, measured,
    fitted, cost model; the file says which)."""

    def __init__(self, value, source):
        self.value = value
        self.source = source

    def __repr__(self):
        return f"Figure({self.value!r}, source={self.source!r})"


class Machine:
    """A machine file: ``name``, ``kind`` (ipu, gpu, cpu), ``backend`` (as --backends names it),
    ``file``, ``summary`` (its line of ``tilesim machines``), ``document`` (the file's JSON) and
    ``figures``: dotted path -> Figure for every ``{"value", "source"}`` object in the file (and in the
    chip file a multi-chip machine names)."""

    def __init__(self, summary):
        self.summary = summary
        self.name = summary["name"]
        self.kind = summary.get("kind")
        self.backend = summary.get("backend")
        self.file = summary["file"]
        with open(self.file, encoding="utf-8") as f:
            self.document = json.load(f)
        self.figures = {}
        _collect(self.document, "", self.figures)
        if "chip_file" in summary:
            with open(summary["chip_file"], encoding="utf-8") as f:
                _collect(json.load(f), "chip_file.", self.figures)

    @classmethod
    def load(cls, name):
        """The machine named ``name`` (``"bow"``, ``"ipu:bow"``, ``"a100-40gb"``) or whose file is ``name``."""
        entries = machines()
        for e in entries:
            if name in (e.get("name"), e.get("backend"), e.get("file")):
                return cls(e)
        from ._errors import InputError
        known = ", ".join(e.get("backend", e.get("name")) for e in entries)
        raise InputError(f"Machine.load: expected a machine name or file ({known}), found \"{name}\"")

    def value(self, path):
        """The value of the figure at a dotted path, e.g. ``"chip.num_tiles"``."""
        return self.figures[path].value

    def __repr__(self):
        return f"Machine({self.backend or self.name!r}, {len(self.figures)} figures)"


def _collect(node, prefix, out):
    if isinstance(node, dict):
        if "value" in node and "source" in node:
            out[prefix.rstrip(".")] = Figure(node["value"], node["source"])
            return
        for k, v in node.items():
            _collect(v, f"{prefix}{k}.", out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _collect(v, f"{prefix}{i}.", out)
