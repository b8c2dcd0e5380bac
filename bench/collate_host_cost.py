#!/usr/bin/python3
"""Host time to make one mini-batch of small graphs, as PyG's DataLoader makes it in the training loop's
thread (num_workers 0): the dataset's per-graph item (InMemoryDataset.get slicing the stored tensors),
then the batch's collation. The items come from the dataset's cache of sliced graphs, as in every
epoch after the first (the whole-model suite's figures average epochs 3 on). Measured on this host with Debian's torch 1.13 on CPU tensors, the time per
batch is fitted (least squares over the batch sizes below) as

    per_batch_s + graphs x per_graph_s

which the GPU machine files state under "host_input" (models/gpu/README.md, "Host input pipeline").

PyG is not in Debian, so the collation is a stand-in written for this measurement from the steps the
two PyG generations take (read in their sources; nothing copied):
- pyg1 (PyG 1.7, the whole-model suite's V100 stack): Batch.from_data_list loops over the graphs and, for
  each key, offsets the graph's index tensor by the running count (a tensor add per graph), records the
  slice and increment, then makes the graph's batch-vector piece (torch.full per graph); afterwards one
  torch.cat per key. The keys, the concatenation dimension and the increment come from Data's
  methods (an attribute scan, a name match per key, the node count through the attributes).
- pyg2 (PyG 2.x, the A100 and H100 files' stack): collate() gathers each key's tensors into a list, cats
  them, computes the increments per graph in Python (__inc__) into one tensor, adds them with one
  repeat_interleave'd add, and builds the batch vector with one repeat_interleave.
The figures are an estimate of PyG's cost on this host, stated as such where they are used.

Graphs are ENZYMES-shaped (TUDataset, use_node_attr: node counts uniform in [2, 63], 4 neighbours per
node in both directions, 21 features, one label).
Run it on a quiet host. Usage: bench/collate_host_cost.py [--style pyg1|pyg2|both] [--repeats N] [--rounds N]
"""
import argparse
import copy
import random
import re
import statistics
import time

import torch

FEATURES = 21


class Graph:
    """A graph item as PyG's Data keeps one: tensors as attributes, keys found by looking at them, the
    concatenation dimension and the index increment decided per key by a name match, the node count
    looked up through its attributes."""

    def __init__(self, **tensors):
        for key, value in tensors.items():
            setattr(self, key, value)

    @property
    def keys(self):
        return [key for key in self.__dict__ if key[:2] != "__" and self.__dict__[key] is not None]

    def __getitem__(self, key):
        return getattr(self, key, None)

    def cat_dim(self, key):
        return -1 if re.search("(index|face)", key) else 0

    def increment(self, key):
        return self.num_nodes if re.search("(index|face)", key) else 0

    @property
    def num_nodes(self):
        for key in ("x", "pos", "norm", "batch"):
            value = self[key]
            if value is not None:
                return value.size(self.cat_dim(key))
        return None


class StoredDataset:
    """An in-memory dataset as PyG keeps one: every graph's tensors concatenated, with slice bounds, and
    a cache of the graphs already sliced out (PyG 1.x's __data_list__), which serves every epoch after
    the first with a shallow copy of the cached item."""

    def __init__(self, num_graphs, seed=0):
        rng = random.Random(seed)
        xs, edges, ys = [], [], []
        bounds = {"x": [0], "edge_index": [0], "y": [0]}
        for _ in range(num_graphs):
            n = rng.randint(2, 63)
            k = min(4, n - 1)
            src = torch.arange(n).repeat_interleave(k)
            dst = (src + torch.randint(1, n, (n * k,))) % n
            xs.append(torch.randn(n, FEATURES))
            edges.append(torch.stack([src, dst]))
            ys.append(torch.tensor([rng.randrange(6)]))
            bounds["x"].append(bounds["x"][-1] + n)
            bounds["edge_index"].append(bounds["edge_index"][-1] + n * k)
            bounds["y"].append(bounds["y"][-1] + 1)
        self.data = Graph(x=torch.cat(xs), edge_index=torch.cat(edges, 1), y=torch.cat(ys))
        self.slices = {key: torch.tensor(b) for key, b in bounds.items()}
        self.cache = [None] * num_graphs

    def __len__(self):
        return len(self.cache)

    def get(self, idx):
        if self.cache[idx] is not None:
            return copy.copy(self.cache[idx])
        item = Graph()
        for key in self.data.keys:
            stored = self.data[key]
            start, end = self.slices[key][idx].item(), self.slices[key][idx + 1].item()
            index = [slice(None)] * stored.dim()
            index[self.data.cat_dim(key)] = slice(start, end)
            setattr(item, key, stored[tuple(index)])
        self.cache[idx] = copy.copy(item)
        return item


def collate_pyg1(graphs):
    """Per graph and key: offset, record, increment; per graph a batch-vector piece; then one cat per key."""
    keys = graphs[0].keys
    lists = {key: [] for key in keys}
    slices = {key: [0] for key in keys}
    cumsum = {key: [0] for key in keys}
    cat_dims = {}
    batch_pieces, ptr = [], [0]
    for i, graph in enumerate(graphs):
        for key in keys:
            item = graph[key]
            offset = cumsum[key][-1]
            if isinstance(item, torch.Tensor) and item.dtype != torch.bool and offset != 0:
                item = item + offset
            if item.dim() == 0:
                item = item.unsqueeze(0)
            lists[key].append(item)
            cat_dims[key] = graph.cat_dim(key)
            slices[key].append(item.size(cat_dims[key]) + slices[key][-1])
            cumsum[key].append(graph.increment(key) + cumsum[key][-1])
        num_nodes = graph.num_nodes
        batch_pieces.append(torch.full((num_nodes,), i, dtype=torch.long))
        ptr.append(ptr[-1] + num_nodes)
    out = Graph(**{key: torch.cat(lists[key], cat_dims[key]) for key in keys})
    out.batch = torch.cat(batch_pieces)
    out.ptr = torch.tensor(ptr)
    for key in out.keys:
        setattr(out, key, out[key].contiguous())
    return out


def collate_pyg2(graphs):
    """Per key: one list, one cat, the increments from Python into one tensor, one repeated add."""
    keys = graphs[0].keys
    sizes = torch.tensor([graph.num_nodes for graph in graphs])
    out = Graph()
    for key in keys:
        values = [graph[key] for graph in graphs]
        value = torch.cat(values, graphs[0].cat_dim(key))
        increments = [graph.increment(key) for graph in graphs]
        if any(increments):
            counts = torch.tensor([v.size(-1) for v in values])
            offsets = torch.tensor([0] + increments[:-1]).cumsum(0)
            value = value + offsets.repeat_interleave(counts).view(1, -1)
        setattr(out, key, value)
    out.batch = torch.arange(len(graphs)).repeat_interleave(sizes)
    out.ptr = torch.cat([torch.zeros(1, dtype=torch.long), sizes.cumsum(0)])
    return out


def time_batch(dataset, batch_size, collate, repeats, rng):
    """Median seconds over `repeats` batches: the loader's shuffled indices, the items, the collation."""
    times = []
    count = len(dataset)
    for _ in range(repeats):
        start = time.perf_counter()
        indices = [rng.randrange(count) for _ in range(batch_size)]
        graphs = [dataset.get(i) for i in indices]
        collate(graphs)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def fit_line(points):
    """Least squares of seconds against graphs per batch: (per_batch_s, per_graph_s)."""
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sum((x - mean_x) ** 2 for x, _ in points)
    return mean_y - slope * mean_x, slope


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--style", choices=["pyg1", "pyg2", "both"], default="both")
    parser.add_argument("--repeats", type=int, default=20, help="batches per size and round (their median)")
    parser.add_argument("--rounds", type=int, default=15, help="rounds over every size (the median over rounds)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    dataset = StoredDataset(600)
    styles = ["pyg1", "pyg2"] if args.style == "both" else [args.style]
    for style in styles:
        collate = collate_pyg1 if style == "pyg1" else collate_pyg2
        rng = random.Random(1)
        for i in range(len(dataset)):  # the first epoch fills the cache; the published epochs come later
            dataset.get(i)
        time_batch(dataset, 64, collate, 20, rng)  # warm-up
        # Rounds over every size, so that a slow spell of the host falls on all sizes alike.
        sizes = (8, 16, 32, 64, 128, 256)
        rounds = [[time_batch(dataset, b, collate, args.repeats, rng) for b in sizes] for _ in range(args.rounds)]
        points = [(b, statistics.median(r[i] for r in rounds)) for i, b in enumerate(sizes)]
        per_batch, per_graph = fit_line(points)
        worst = max(abs(per_batch + per_graph * b - t) / t for b, t in points)
        print(f"{style}: " + ", ".join(f"{b} graphs {t * 1e6:.0f} us" for b, t in points))
        print(f"{style}: per_batch_s {per_batch:.3e}, per_graph_s {per_graph:.3e} (worst residual {100 * worst:.1f}%)")


if __name__ == "__main__":
    main()
