"""GNN layers of a workload's "model" (docs/workload-format.md, "Models"): one class per ``layer``
kind, whose keyword arguments are the layer object's keys (``out``, ``activation``, ``bias``,
``name``, and each kind's own: ``heads``, ``hidden``, ``filters``, ...). The keys are checked by the
workload reader when the workload is checked or run, with the same messages as for a file.

PyG classes and the tilesim layers they map to (``PYG_LAYERS``):

=================  ==============  =====================================================
PyG class          tilesim layer   notes
=================  ==============  =====================================================
GCNConv            GCN             normalisation with self-loops, as GCNConv's default
SAGEConv           SAGE            mean aggregation (SAGEConv's default), root weight
GINConv            GIN             the MLP Linear(in, hidden) -> ReLU -> Linear(hidden, out)
GATConv            GAT             ``heads`` concatenated, ``negative_slope``
InteractionBlock   SchNet          SchNet's interaction block (``filters``, ``cutoff``)
RGCNConv           RGCN            ``num_relations`` relation weights
=================  ==============  =====================================================
"""


class Layer:
    """A layer object: ``kind`` (the JSON ``layer`` value) and its keys."""

    kind = None

    def __init__(self, kind=None, **fields):
        self.kind = kind or self.kind
        if self.kind is None:
            raise TypeError("Layer needs a kind (gcn, sage, gin, gat, schnet, rgcn): use tilesim.layers.GCN(...) and friends")
        self.fields = fields

    def to_dict(self):
        return {"layer": self.kind, **self.fields}

    @staticmethod
    def from_dict(obj):
        """The layer class of a layer object; an object of no known kind is kept as it is, so the
        workload reader reports exactly what it found."""
        if isinstance(obj, dict) and obj.get("layer") in _BY_KIND:
            fields = dict(obj)
            return _BY_KIND[fields.pop("layer")](**fields)
        return _AsGiven(obj)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.fields.items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        return isinstance(other, Layer) and self.to_dict() == other.to_dict()


class _AsGiven(Layer):
    """A model entry that is not a known layer object, passed on unchanged for the reader to report."""
    kind = "?"

    def __init__(self, obj):
        super().__init__()
        self.obj = obj

    def to_dict(self):
        return self.obj


class GCN(Layer):
    """GCNConv: ``out``, ``activation``, ``bias``, ``name``."""
    kind = "gcn"


class SAGE(Layer):
    """SAGEConv (mean): ``out``, ``activation``, ``bias``, ``name``."""
    kind = "sage"


class GIN(Layer):
    """GINConv with its MLP: ``out``, ``hidden``, ``eps``, ``activation``, ``bias``, ``name``."""
    kind = "gin"


class GAT(Layer):
    """GATConv: ``out`` (channels per head), ``heads``, ``negative_slope``, ``activation``, ``bias``, ``name``."""
    kind = "gat"


class SchNet(Layer):
    """SchNet InteractionBlock: ``filters``, ``num_gaussians``, ``cutoff``, ``activation``, ``bias``, ``name``."""
    kind = "schnet"


class RGCN(Layer):
    """RGCNConv: ``out``, ``num_relations``, ``activation``, ``bias``, ``name``."""
    kind = "rgcn"


_BY_KIND = {c.kind: c for c in (GCN, SAGE, GIN, GAT, SchNet, RGCN)}

# PyG layer class name -> tilesim layer class (the table above).
PYG_LAYERS = {"GCNConv": GCN, "SAGEConv": SAGE, "GINConv": GIN, "GATConv": GAT, "InteractionBlock": SchNet, "RGCNConv": RGCN}
