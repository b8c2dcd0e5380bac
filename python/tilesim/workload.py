"""tilesim.Workload: a workload (docs/workload-format.md) as Python objects, round-tripping exactly with
the JSON format. ``Workload.from_json(path).to_dict()`` equals the file's object, and every check is the
workload reader's own (the same C++ code ``tilesim run`` uses), raising ``tilesim.InputError`` with the
JSON path and the same text the command line prints.
"""
import json

from . import _native
from .graph import Graph
from .layers import Layer
from ._errors import InputError

_KEYS = ("name", "seed", "ops", "graph", "num_features", "model", "train", "loader")


class _Object:
    """A JSON object of the format whose keys are given as keyword arguments."""

    key = None  # the key naming the kind ("op", "kind"), if any

    def __init__(self, kind=None, **fields):
        self.fields = ({self.key: kind} if self.key and kind is not None else {}) | fields

    def to_dict(self):
        return {k: (_plain(v)) for k, v in self.fields.items()}

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.fields.items())})"

    def __eq__(self, other):
        return type(self) is type(other) and self.to_dict() == other.to_dict()


class Op(_Object):
    """An entry of ``ops``: ``Op("gather", num_inputs=..., num_features=..., num_outputs=..., indices="sorted")``."""
    key = "op"


class Train(_Object):
    """The ``train`` section: ``Train(task="node", loss="cross_entropy", optimizer=Adam(lr=0.01), steps=5)``."""


class Loader(_Object):
    """The ``loader`` section: ``Loader("neighbor", batch_size=1024, fanouts=[25, 10])``."""
    key = "kind"


class Adam(_Object):
    """``{"kind": "adam", ...}`` for ``Train(optimizer=...)``: ``lr``, ``betas``, ``eps``, ``weight_decay``."""

    key = "kind"

    def __init__(self, **fields):
        super().__init__("adam", **fields)


class SGD(_Object):
    """``{"kind": "sgd", ...}`` for ``Train(optimizer=...)``: ``lr``, ``momentum``, ``weight_decay``."""

    key = "kind"

    def __init__(self, **fields):
        super().__init__("sgd", **fields)


def _plain(value):
    """Objects of this module as the JSON values they stand for."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class Workload:
    """A workload. Keyword arguments are the top-level keys of the JSON format:

    ``Workload("gcn_cora", graph=Graph.preset("cora"), model=[layers.GCN(out=16, activation="relu"),
    layers.GCN(out=7)], train=Train(...), loader=Loader(...), seed=0)``

    ``ops`` take ``Op`` objects or dicts, ``model`` ``tilesim.layers`` objects or dicts, ``graph`` a
    ``Graph`` or a dict. The workload is checked when it is made (``check=False`` defers that to
    ``check()`` or ``tilesim.run``).
    """

    def __init__(self, name=None, *, seed=None, ops=None, graph=None, num_features=None, model=None, train=None, loader=None,
                 source_file="", check=True, _extra=None, _order=None):
        self.name = name
        self.seed = seed
        self.ops = [o if hasattr(o, "to_dict") else (Op(**o) if isinstance(o, dict) else o) for o in ops] if isinstance(ops, list) else ops
        self.graph = Graph(graph) if isinstance(graph, dict) else graph
        if num_features is None and isinstance(self.graph, Graph) and self.graph.x is not None and len(getattr(self.graph.x, "shape", ())) == 2:
            num_features = int(self.graph.x.shape[1])
        self.num_features = num_features
        self.model = [m if isinstance(m, Layer) else Layer.from_dict(m) for m in model] if isinstance(model, list) else model
        self.train = train
        self.loader = loader
        self.source_file = str(source_file or "")
        self._extra = dict(_extra or {})  # keys the format does not have: passed on for the reader to refuse
        self._order = list(_order or [])
        self._check_in_channels()
        if check:
            self.check()

    def _check_in_channels(self):
        """PyG's in_channels, where a layer was given one: it must be the width the layer gets."""
        if not isinstance(self.model, list):
            return
        width, source = self.num_features, "num_features"
        for i, layer in enumerate(self.model):
            given = getattr(layer, "in_channels", None)
            if given is not None and given != -1 and width is not None and given != width:
                raise InputError(f"model[{i}].in_channels: expected {width} (the layer's input width, from {source}), found {given}",
                                 self.source_file, f"model[{i}].in_channels")
            width = layer.output_width(width) if isinstance(layer, Layer) else None
            source = f"model[{i}]'s output"

    # --- JSON --------------------------------------------------------------------------------
    @classmethod
    def from_json(cls, path, graphs=None):
        """Reads a workload file as ``tilesim run`` does (same errors); ``graphs`` maps the names of
        ``{"edge_index": NAME}`` graph objects to in-memory ``Graph`` objects."""
        path = str(path)
        _native.core.load_json(path)  # the reader's own checks and messages (syntax, duplicate keys, size)
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
        return cls.from_dict(document, source_file=path, graphs=graphs)

    @classmethod
    def from_dict(cls, document, source_file="", graphs=None):
        if not isinstance(document, dict):
            raise InputError(f"{source_file or 'workload'}: expected a JSON object, found {type(document).__name__}", source_file)
        known = {k: document[k] for k in _KEYS if k in document}
        extra = {k: v for k, v in document.items() if k not in _KEYS}
        graph = known.get("graph")
        if isinstance(graph, dict) and isinstance(graph.get("edge_index"), str):
            given = (graphs or {}).get(graph["edge_index"])
            if given is not None:
                graph = Graph(graph, edge_index=given.edge_index, num_nodes=given.num_nodes, batch=given.batch,
                              num_graphs=given.num_graphs, x=given.x)
        ops = known.get("ops")
        return cls(known.get("name"), seed=known.get("seed"), ops=[Op(**o) if isinstance(o, dict) else o for o in ops] if isinstance(ops, list) else ops,
                   graph=graph, num_features=known.get("num_features"), model=known.get("model"), train=known.get("train"),
                   loader=known.get("loader"), source_file=source_file, _extra=extra, _order=list(document))

    def to_dict(self):
        """The workload's JSON object: the keys it was given, in the order they were given."""
        values = {"name": self.name, "seed": self.seed, "ops": self.ops, "graph": self.graph, "num_features": self.num_features,
                  "model": self.model, "train": self.train, "loader": self.loader}
        given = {k: _plain(v) for k, v in values.items() if v is not None}
        given.update(self._extra)
        order = [k for k in self._order if k in given] + [k for k in given if k not in self._order]
        return {k: given[k] for k in order}

    def to_json(self, indent=2):
        return json.dumps(self.to_dict(), indent=indent)

    def save(self, path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json() + "\n")

    # --- checks and the native module ---------------------------------------------------------
    def in_memory_graphs(self):
        """name -> Graph for the in-memory graphs the workload uses."""
        return {self.graph.name: self.graph} if isinstance(self.graph, Graph) and self.graph.in_memory else {}

    def native_arguments(self):
        """(document text, file, graphs) as the native module takes them."""
        try:
            text = json.dumps(self.to_dict(), allow_nan=False)
        except (TypeError, ValueError) as e:
            raise InputError(f"{self.source_file or 'workload'}: expected values JSON can hold, found {e}", self.source_file) from None
        graphs = {name: g.native_listing() for name, g in self.in_memory_graphs().items() if g.edge_index is not None}
        return text, self.source_file, graphs

    def check(self):
        """Checks the workload as ``tilesim run`` does; returns the resolved workload (every default
        filled in) as report.json echoes it. Raises ``tilesim.InputError``."""
        return json.loads(_native.core.check_workload(*self.native_arguments()))

    def __repr__(self):
        parts = [repr(self.name)]
        if self.ops:
            parts.append(f"ops={self.ops!r}")
        if self.graph is not None:
            parts.append(f"graph={self.graph!r}")
        if self.num_features is not None:
            parts.append(f"num_features={self.num_features}")
        if self.model:
            parts.append(f"model={self.model!r}")
        for key in ("train", "loader"):
            if getattr(self, key) is not None:
                parts.append(f"{key}={getattr(self, key)!r}")
        return f"Workload({', '.join(parts)})"
