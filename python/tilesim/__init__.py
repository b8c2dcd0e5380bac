"""tilesim from Python (docs/python.md): how fast would a gather/scatter or GNN workload run on a
simulated IPU, a modelled GPU and this host's CPU, and why.

    import tilesim
    g = tilesim.Graph.from_edge_index(edge_index, num_nodes=2708)
    w = tilesim.Workload("gcn", graph=g, num_features=1433,
                         model=[tilesim.layers.GCN(out=16, activation="relu"), tilesim.layers.GCN(out=7)])
    r = tilesim.run(w, backends=["ipu:bow", "cpu"])
    print(r.table)

The module is the command line's own C++ core (tilesim._core), not a second implementation: the same
workload checks and messages, the same engine and reports.
"""
from . import layers
from ._errors import DoesNotFitError, Error, InputError
from .commands import (Figures, SweepResult, Table, backends, calibrate, calibrate_model, cli, fit, placement, plot_surface,
                       plot_throughput, report, roofline, sweep, validate, version)
from .graph import Graph
from .machines import Figure, Machine, machines
from .run import Result, run
from .workload import SGD, Adam, Loader, Op, Train, Workload

__all__ = ["layers", "Error", "InputError", "DoesNotFitError", "Graph", "Workload", "Op", "Train", "Loader", "Adam", "SGD", "run",
           "Result", "sweep", "SweepResult", "Table", "validate", "roofline", "plot_surface", "plot_throughput", "report", "fit",
           "placement", "calibrate", "calibrate_model", "machines", "Machine", "Figure", "backends", "cli", "version", "Figures"]
