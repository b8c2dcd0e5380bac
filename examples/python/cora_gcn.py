#!/usr/bin/env python3
"""The Cora GCN from Python: the shipped edge list read into a [2, E] tensor (as PyG's Planetoid would
hold it), the two-layer GCN of Kipf and Welling built as tilesim objects, run on the simulated Bow IPU,
this host's CPU kernels and PyTorch's ATen (torch-cpu), and the time of each layer plotted.

    PYTHONPATH=build/release/python python3 examples/python/cora_gcn.py [--out out/python-cora]

Writes OUT/report.json (the run's report), OUT/layers.csv (time per layer and backend) and
OUT/layers.png / .pdf (the plot); prints the command line's table.
"""
import argparse
import csv
import os
import pathlib

import torch

import tilesim

REPO = pathlib.Path(__file__).resolve().parents[2]


def read_cora_edges(path):
    """cora.cites: "cited citing" paper ids per line; ids renumbered 0..N-1 in order of first appearance
    (as tilesim's edge-list reader does), both directions kept (Cora is used undirected)."""
    ids, src, dst = {}, [], []
    for line in open(path, encoding="utf-8"):
        parts = line.split()
        if len(parts) != 2 or line.startswith("#"):
            continue
        a, b = (ids.setdefault(p, len(ids)) for p in parts)
        src += [a, b]
        dst += [b, a]
    edge_index = torch.tensor([src, dst], dtype=torch.int64)
    return edge_index, len(ids)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out/python-cora", help="output folder (default out/python-cora)")
    parser.add_argument("--backends", default="ipu:bow,cpu,torch-cpu", help="comma-separated backends")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    edge_index, num_nodes = read_cora_edges(REPO / "workloads" / "data" / "cora" / "cora.cites")
    x = torch.randn(num_nodes, 1433, generator=torch.Generator().manual_seed(0))  # Cora's 1433 bag-of-words features
    graph = tilesim.Graph.from_edge_index(edge_index, num_nodes, x=x, deduplicate=True, remove_self_loops=True)
    workload = tilesim.Workload("python_cora_gcn", graph=graph,
                                model=[tilesim.layers.GCN(name="conv1", out=16, activation="relu"),
                                       tilesim.layers.GCN(name="conv2", out=7)])
    print(f"Cora: {num_nodes} nodes, {edge_index.shape[1]} directed edges; running on {args.backends}", flush=True)
    result = tilesim.run(workload, backends=args.backends.split(","), out=args.out)
    print(result.table)
    # The tidy view: time per backend and layer, what each number is, speedups over the first backend.
    print(result.summary().to_string(index=False))

    # Time per layer and backend (the report's per-layer groups), as a CSV and a grouped bar chart.
    groups = result.groups()
    with open(os.path.join(args.out, "layers.csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["backend", "kind", "layer", "time_s"])
        for g in groups:
            w.writerow([g["backend"], result.result(g["backend"])["kind"], g["name"], g["time_s"]])
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    layers = sorted({g["name"] for g in groups})
    backends = result.backends
    fig, ax = plt.subplots(figsize=(6, 3.5))
    width = 0.8 / len(backends)
    for i, b in enumerate(backends):
        times = [next(g["time_s"] for g in groups if g["backend"] == b and g["name"] == layer) * 1e6 for layer in layers]
        ax.bar([k + i * width for k in range(len(layers))], times, width, label=f"{b} ({result.result(b)['kind']})")
    ax.set_xticks([k + width * (len(backends) - 1) / 2 for k in range(len(layers))], layers)
    ax.set_yscale("log")
    ax.set_ylabel("time per layer (us)")
    ax.set_title("GCN on Cora: forward pass per layer")
    ax.legend(fontsize=8)
    fig.tight_layout()
    for ext in ("png", "pdf"):
        fig.savefig(os.path.join(args.out, f"layers.{ext}"))
    print(f"plot: {os.path.join(args.out, 'layers.png')} (and .pdf; data in layers.csv)")


if __name__ == "__main__":
    main()
