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
GINConv            GIN             the MLP Linear(in, hidden) -> ReLU -> Linear(hidden, out), or ``nn="linear"``: one Linear(in, out)
GATConv            GAT             ``heads`` concatenated, ``negative_slope``
InteractionBlock   SchNet          SchNet's interaction block (``filters``, ``cutoff``)
RGCNConv           RGCN            ``num_relations`` relation weights
torch.nn.Linear    Linear          applied to every node row, no message passing (a readout, an input projection)
FiLMConv           FiLM            one relation, ReLU, ``aggr`` ``"mean"`` (FiLMConv's default), ``"add"`` or ``"max"``
CGConv             CGConv          no edge features, keeps its width, ``aggr`` ``"add"`` (CGConv's default), ``"mean"`` or ``"max"``
=================  ==============  =====================================================

PyG's spellings are accepted: ``out_channels`` is tilesim's ``out`` (channels per head for GAT), and
``in_channels`` is checked against the width the layer gets (the workload's ``num_features`` for the
first layer, the previous layer's output after) when the workload is made; tilesim itself takes a
layer's input width from there, so it is not part of the layer object. ``in_channels=-1`` (PyG's lazy
initialisation) is not checked.
"""
from ._errors import InputError


class Layer:
    """A layer object: ``kind`` (the JSON ``layer`` value) and its keys."""

    kind = None

    def __init__(self, kind=None, *, in_channels=None, out_channels=None, **fields):
        self.kind = kind or self.kind
        if self.kind is None:
            raise TypeError("Layer needs a kind (gcn, sage, gin, gat, schnet, rgcn, linear, pool, film, cgconv): use tilesim.layers.GCN(...) and friends")
        if out_channels is not None:
            # PyG's name for tilesim's "out": the same number either way, so both may be given if they agree.
            if "out" in fields and fields["out"] != out_channels:
                raise InputError(f"{type(self).__name__}: expected out_channels (PyG's name) equal to out (tilesim's), found "
                                 f"out={fields['out']!r} and out_channels={out_channels!r}")
            fields["out"] = out_channels
        self.in_channels = in_channels  # checked by Workload against the width the layer gets; not a JSON key
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

    def output_width(self, width):
        """The layer's output width given its input width, or None where this object does not say
        (a SchNet block, a GAT without ``heads``)."""
        out = self.fields.get("out")
        if self.kind in ("gcn", "sage", "gin", "rgcn", "linear", "film") and isinstance(out, int):
            return out
        if self.kind in ("pool", "cgconv"):
            return width  # each graph's rows reduced to one, the width kept
        if self.kind == "gat" and isinstance(out, int) and self.fields.get("concat") is False:
            return out  # heads averaged
        if self.kind == "gat" and isinstance(out, int) and isinstance(self.fields.get("heads"), int):
            return out * self.fields["heads"]  # heads concatenated
        return None

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
    """GCNConv: ``out``, ``activation``, ``bias``, ``name``; every layer also takes ``input_dropout`` (``nn.Dropout``
    on its input in a training step)."""
    kind = "gcn"


class SAGE(Layer):
    """SAGEConv (mean): ``out``, ``activation``, ``bias``, ``name``."""
    kind = "sage"


class GIN(Layer):
    """GINConv: ``out``, ``nn`` (``"mlp"``, PyG GIN's Linear -> ReLU -> Linear, the default, or ``"linear"``,
    one Linear), ``hidden`` (the MLP's), ``eps``, ``activation``, ``bias``, ``name``."""
    kind = "gin"


class GAT(Layer):
    """GATConv: ``out`` (channels per head), ``heads``, ``negative_slope``, ``attention_dropout`` (PyG's
    ``dropout``, which is accepted), ``attention`` (``"per_node"`` or ``"per_edge"``), ``concat``, ``input_dropout``,
    ``activation``, ``bias``, ``name``."""
    kind = "gat"

    def __init__(self, kind=None, *, dropout=None, **fields):
        if dropout is not None:  # PyG's GATConv drops attention coefficients under this name
            if "attention_dropout" in fields and fields["attention_dropout"] != dropout:
                raise InputError(f"GAT: expected dropout (PyG's name) equal to attention_dropout (tilesim's), found "
                                 f"attention_dropout={fields['attention_dropout']!r} and dropout={dropout!r}")
            fields["attention_dropout"] = dropout
        super().__init__(kind, **fields)


class SchNet(Layer):
    """SchNet InteractionBlock: ``filters``, ``num_gaussians``, ``cutoff``, ``activation``, ``bias``, ``name``."""
    kind = "schnet"


class RGCN(Layer):
    """RGCNConv: ``out``, ``num_relations``, ``activation``, ``bias``, ``name``."""
    kind = "rgcn"


class Linear(Layer):
    """torch.nn.Linear on every node row (no message passing): ``out``, ``activation``, ``bias``, ``name``."""
    kind = "linear"


class Pool(Layer):
    """global_add_pool / global_mean_pool inside the model: ``reduce`` (``"add"`` or ``"mean"``), ``name``; only
    Linear layers (a readout MLP) may follow it."""
    kind = "pool"


class FiLM(Layer):
    """FiLMConv with one relation and its ReLU: ``out``, ``aggr`` (``"mean"``, the default, ``"add"`` or ``"max"``),
    ``activation``, ``bias`` (the FiLM generator's), ``name``."""
    kind = "film"


class CGConv(Layer):
    """CGConv without edge features: ``aggr`` (``"add"``, the default, ``"mean"`` or ``"max"``), ``activation``,
    ``bias`` (lin_f's and lin_s's), ``name``; ``out``, when given, must equal the input width."""
    kind = "cgconv"


_BY_KIND = {c.kind: c for c in (GCN, SAGE, GIN, GAT, SchNet, RGCN, Linear, Pool, FiLM, CGConv)}

# PyG layer class name -> tilesim layer class (the table above).
PYG_LAYERS = {"GCNConv": GCN, "SAGEConv": SAGE, "GINConv": GIN, "GATConv": GAT, "InteractionBlock": SchNet, "RGCNConv": RGCN, "Linear": Linear,
              "FiLMConv": FiLM, "CGConv": CGConv}
