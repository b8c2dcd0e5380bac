"""tilesim.Graph: the workload's "graph" object (docs/graph-format.md), or a graph handed over in
memory as a PyG-style ``edge_index``.

A Graph is its JSON object (``to_dict()``): one source (``generator``, ``preset``, ``file``, or, from
Python only, ``edge_index``) and the clean-up options (``symmetrize``, ``deduplicate``,
``remove_self_loops``, ``add_self_loops``, ``edge_order``, ``num_features``, ``num_relations``). The
checks are the workload reader's own, made when the workload is checked or run.
"""
import itertools

import numpy as np

from ._arrays import is_torch, to_numpy
from ._errors import InputError

_SOURCES = ("generator", "preset", "file", "edge_index")
_names = itertools.count()


class Graph:
    """A graph for a workload's model. Build one with a class method:

    - ``Graph.preset("cora")``, ``Graph.generator("erdos_renyi", num_nodes=..., num_edges=...)``,
      ``Graph.file("edges.txt", format="edge_list")``: the JSON format's sources;
    - ``Graph.from_edge_index(edge_index, num_nodes=None)``: a ``[2, E]`` integer tensor or array, as
      PyG stores it (row 0 sources, row 1 targets; messages flow source to target);
    - ``Graph.from_pyg(data)``: any object with ``edge_index`` and ``num_nodes`` (and optionally ``x``
      and ``batch``), such as a PyG ``Data`` or ``Batch``, without importing PyG.

    Keyword options are the graph object's clean-up keys (``symmetrize=True``, ...).
    """

    def __init__(self, spec, *, edge_index=None, num_nodes=None, batch=None, num_graphs=None, x=None):
        if not isinstance(spec, dict):
            raise InputError(f"graph: expected a graph object (dict), found {type(spec).__name__}")
        self._spec = dict(spec)
        self.edge_index = edge_index  # int64 [2, E] numpy, for in-memory graphs
        self.num_nodes = num_nodes
        self.batch = batch
        self.num_graphs = num_graphs
        self.x = x  # node features (torch or numpy), fed to the model's input "x" by tilesim.run
        self.from_torch = False

    # --- the JSON format's sources -------------------------------------------------------------
    @classmethod
    def preset(cls, name, **options):
        return cls({"preset": name, **options})

    @classmethod
    def generator(cls, name, **params_and_options):
        return cls({"generator": name, **params_and_options})

    @classmethod
    def file(cls, path, format=None, **options):  # noqa: A002 - the JSON key's name
        spec = {"file": str(path)}
        if format is not None:
            spec["format"] = format
        return cls({**spec, **options})

    @classmethod
    def from_dict(cls, spec):
        return cls(spec)

    # --- in memory -----------------------------------------------------------------------------
    @classmethod
    def from_edge_index(cls, edge_index, num_nodes=None, *, batch=None, x=None, name=None, **options):
        """A graph from a ``[2, E]`` integer tensor or array (PyG's ``edge_index``). ``num_nodes``
        defaults to the largest node id plus one (as PyG's ``maybe_num_nodes``); ``batch`` is PyG's
        vector of the graph each node belongs to; ``x`` node features ``[num_nodes, F]`` that
        ``tilesim.run`` feeds to the model. The array is kept as given (converted to int64 only if it
        is not already), and copied once, into the engine, when the workload runs."""
        ids = to_numpy(edge_index, np.int64, "Graph.from_edge_index: edge_index")
        if ids.ndim != 2 or ids.shape[0] != 2:
            raise InputError(f"Graph.from_edge_index: edge_index: expected a [2, E] integer array (PyG's edge_index), found shape {list(ids.shape)}")
        if ids.shape[1] == 0:
            raise InputError("Graph.from_edge_index: edge_index: expected a graph with at least one edge, found [2, 0]")
        if num_nodes is None:
            num_nodes = int(ids.max()) + 1
        num_nodes = int(num_nodes)
        batch_ids, num_graphs = None, None
        if batch is not None:
            batch_ids = to_numpy(batch, np.int64, "Graph.from_edge_index: batch")
            num_graphs = int(batch_ids.max()) + 1 if batch_ids.size else 0
        name = name or f"edge_index_{next(_names)}"
        spec = {"edge_index": name, "num_nodes": num_nodes, "num_edges": int(ids.shape[1])}
        if batch_ids is not None:
            spec["num_graphs"] = num_graphs
        g = cls({**spec, **options}, edge_index=ids, num_nodes=num_nodes, batch=batch_ids, num_graphs=num_graphs, x=x)
        g.from_torch = is_torch(edge_index)
        return g

    @classmethod
    def from_pyg(cls, data, **options):
        """A graph from a PyG ``Data``/``Batch`` (or any object with the same attributes): its
        ``edge_index``, ``num_nodes``, and ``x`` and ``batch`` when present. PyG is not imported."""
        if not hasattr(data, "edge_index"):
            raise InputError(f"Graph.from_pyg: expected an object with an edge_index attribute (a PyG Data or Batch), found {type(data).__name__}")
        return cls.from_edge_index(data.edge_index, getattr(data, "num_nodes", None), batch=getattr(data, "batch", None),
                                   x=getattr(data, "x", None), **options)

    # --- the JSON object -----------------------------------------------------------------------
    @property
    def in_memory(self):
        return "edge_index" in self._spec

    @property
    def name(self):
        """The in-memory graph's name in the workload document (None for other sources)."""
        return self._spec.get("edge_index")

    def to_dict(self):
        return dict(self._spec)

    def save(self, path):
        """Writes an in-memory graph as a Matrix Market file (docs/graph-format.md: entry (i, j) is the
        edge i -> j, 1-based; the size line's order keeps isolated nodes), which keeps node ids as they
        are, and returns the graph object naming it (``Graph.file(path, format="matrix_market")`` with
        this graph's clean-up options) for workload files and the file-based commands. A batch vector
        has no place in the format and is refused."""
        if not self.in_memory:
            raise InputError(f"Graph.save: expected a graph handed over in memory (Graph.from_edge_index), found a {self!r}")
        if self.batch is not None:
            raise InputError("Graph.save: expected a graph without a batch vector (Matrix Market holds one graph), found one of "
                             f"{self.num_graphs} graphs")
        ids = self.edge_index + 1
        with open(path, "w", encoding="utf-8") as f:
            f.write("%%MatrixMarket matrix coordinate pattern general\n")
            f.write(f"% written by tilesim.Graph.save: {ids.shape[1]} directed edges, entry (i, j) = edge i -> j\n")
            f.write(f"{self.num_nodes} {self.num_nodes} {ids.shape[1]}\n")
            np.savetxt(f, ids.T, fmt="%d")
        options = {k: v for k, v in self._spec.items() if k not in ("edge_index", "num_nodes", "num_edges", "num_graphs")}
        return Graph.file(str(path), format="matrix_market", **options)

    def native_listing(self):
        """(edge_index, num_nodes, batch, num_graphs) for the native module: in-memory graphs only."""
        return (self.edge_index, self.num_nodes, self.batch, self.num_graphs)

    def __repr__(self):
        source = next((k for k in _SOURCES if k in self._spec), None)
        if self.in_memory:
            sizes = f"{self.num_nodes} nodes, {self._spec.get('num_edges')} edges"
            if self.num_graphs is not None:
                sizes += f", {self.num_graphs} graphs"
            if self.x is not None and len(getattr(self.x, "shape", ())) == 2:
                sizes += f", x [{self.x.shape[0]}, {self.x.shape[1]}] ({self.x.shape[1]} features)"
            head = f"in memory {self.name!r}: {sizes}"
        else:
            head = f"{source}={self._spec.get(source)!r}"
        options = ", ".join(f"{k}={v!r}" for k, v in self._spec.items() if k not in _SOURCES and k not in ("num_nodes", "num_edges", "num_graphs"))
        return f"Graph({head}{', ' + options if options else ''})"
