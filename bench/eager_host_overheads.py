#!/usr/bin/python3
"""Host-side costs of eager PyG calls beyond one kernel-launching ATen call, measured on this host with
Debian's torch 1.13 on tiny CPU tensors (so the kernels cost next to nothing): a view call, an
nn.Module call, MessagePassing.propagate's Python, and autograd's extra on a CPU tensor. The first three
launch nothing on a GPU either, so models/gpu/machines/*.json take them as measured here
(eager_host_floor_s: aten_view_call, module_call, propagate_call; assumption: the A100 host runs Python
and the dispatcher at this host's speed). The reference call (an nn.Module whose forward is one
index_select, the call the A100 model's fitted gather floor was measured on) is printed for scale only:
on a GPU it also pays the CUDA driver, which no CPU run has, so the figures are not scaled by it.
Autograd's extra is printed for comparison with the CUDA-tensor figure the machine files use.

The propagate stand-in does the Python work PyG 2.3's MessagePassing.propagate does for CFConv
(torch_geometric/nn/conv/message_passing.py): six empty hook-dict loops, the edge_index checks (type,
dtype, dim, size), collecting x_j and W (suffix tests, lookups, a size check, edge_index[0] and the
edge_index[i]/[j] views), three argument distributions for message/aggregate/update, and the
aggregation module's call with its argument checks. Its index_select and scatter are left out: they
are the gather and scatter ops the GPU model charges already. It is written for this measurement, not
taken from PyG (which Debian does not package), so the figure is an estimate of PyG's cost, stated as
such in the machine files.

Run it on a quiet host: another process on the same cores inflates every figure several times.
Usage: bench/eager_host_overheads.py [--repeats N] [--calls N]   (microseconds per call, and the ratio to the reference)
"""
import argparse
import collections
import inspect
import statistics
import time

import torch


class OneIndexSelect(torch.nn.Module):
    def __init__(self, x, idx):
        super().__init__()
        self.x, self.idx = x, idx

    def forward(self):
        return self.x.index_select(0, self.idx)


class Passthrough(torch.nn.Module):
    def forward(self, *args, **kwargs):
        return args[0] if args else None


class StandInAggregation(torch.nn.Module):
    """The checks an Aggregation's __call__ makes before reducing (dim, index/ptr, dim_size)."""

    def forward(self, x, index=None, ptr=None, dim_size=None, dim=-2):
        if dim >= x.dim() or dim < -x.dim():
            raise ValueError("dim")
        if index is None and ptr is None:
            index = x.new_zeros(x.size(dim))
        if ptr is not None and dim_size is None:
            dim_size = ptr.numel() - 1
        if dim_size is None:
            dim_size = int(index.max()) + 1 if index.numel() > 0 else 0
        return self.reduce(x, index, ptr, dim_size, dim)

    def reduce(self, x, index, ptr, dim_size, dim):
        return x  # the scatter itself is the GPU model's scatter_add op


class StandInPropagate(torch.nn.Module):
    user_args = ["x_j", "W"]
    special = {"edge_index", "adj_t", "edge_index_i", "edge_index_j", "size", "size_i", "size_j", "ptr", "index", "dim_size"}

    def __init__(self):
        super().__init__()
        self.aggr_module = StandInAggregation()
        self.node_dim = -2
        self.hooks = [collections.OrderedDict() for _ in range(6)]
        self.params = {
            "message": collections.OrderedDict((k, inspect.Parameter.empty) for k in ["x_j", "W"]),
            "aggregate": collections.OrderedDict((k, inspect.Parameter.empty) for k in ["index", "ptr", "dim_size"]),
            "update": collections.OrderedDict(),
        }

    def distribute(self, func, kwargs):
        out = {}
        for key, default in self.params[func].items():
            data = kwargs.get(key, inspect.Parameter.empty)
            if data is inspect.Parameter.empty and default is inspect.Parameter.empty:
                if key not in kwargs:
                    data = None
            out[key] = data
        return out

    def message(self, x_j, W):
        return x_j

    def propagate(self, edge_index, size=None, **kwargs):
        for hook in self.hooks[0].values():
            hook()
        the_size = [None, None]
        if isinstance(edge_index, torch.Tensor):
            assert edge_index.dtype == torch.long
            assert edge_index.dim() == 2
            assert edge_index.size(0) == 2
        i, j = 1, 0
        coll = {}
        for arg in self.user_args:
            if arg[-2:] not in ("_i", "_j"):
                coll[arg] = kwargs.get(arg, inspect.Parameter.empty)
            else:
                dim = j if arg[-2:] == "_j" else i
                data = kwargs.get(arg[:-2], inspect.Parameter.empty)
                if isinstance(data, (tuple, list)):
                    data = data[dim]
                if isinstance(data, torch.Tensor):
                    if the_size[dim] is None:
                        the_size[dim] = data.size(self.node_dim)
                    data = (edge_index[dim], data)[1]  # the index view; the index_select is the gather op
                coll[arg] = data
        coll["adj_t"] = None
        coll["edge_index"] = edge_index
        coll["edge_index_i"] = edge_index[i]
        coll["edge_index_j"] = edge_index[j]
        coll["ptr"] = None
        coll["index"] = coll["edge_index_i"]
        coll["size"] = the_size
        coll["size_i"] = the_size[i] if the_size[i] is not None else the_size[j]
        coll["size_j"] = the_size[j] if the_size[j] is not None else the_size[i]
        coll["dim_size"] = coll["size_i"]
        msg_kwargs = self.distribute("message", coll)
        for hook in self.hooks[1].values():
            hook()
        out = self.message(**msg_kwargs)
        for hook in self.hooks[2].values():
            hook()
        aggr_kwargs = self.distribute("aggregate", coll)
        for hook in self.hooks[3].values():
            hook()
        out = self.aggr_module(out, **aggr_kwargs, dim=self.node_dim)
        for hook in self.hooks[4].values():
            hook()
        update_kwargs = self.distribute("update", coll)
        for hook in self.hooks[5].values():
            hook()
        return out


def per_call_s(fn, calls, repeats):
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - t0) / calls)
    return statistics.median(runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    x = torch.randn(16, 16)
    idx = torch.randint(0, 16, (32,))
    ei = torch.randint(0, 16, (2, 32))
    w = torch.randn(32, 16)
    reference = OneIndexSelect(x, idx)
    empty = Passthrough()
    prop = StandInPropagate()
    y = torch.randn(16, 16, requires_grad=True) * 1.0  # a non-leaf that records autograd history
    plain = torch.randn(16, 16)
    figures = {
        "reference: nn.Module with one index_select": lambda: reference(),
        "(cos of a tensor without grad)": lambda: torch.cos(plain),
        "(cos of a tensor that requires grad)": lambda: torch.cos(y),
        "aten_view_call: idx.view(-1, 1)": lambda: idx.view(-1, 1),
        "module_call: empty nn.Module": lambda: empty(x),
        "propagate_call: MessagePassing.propagate stand-in": lambda: prop.propagate(ei, x=x, W=w),
    }
    times = {k: per_call_s(f, args.calls, args.repeats) for k, f in figures.items()}
    ref = next(iter(times.values()))
    print(f"torch {torch.__version__}, {args.repeats} repeats of {args.calls} calls, median per call (measured, this host)")
    times["autograd_node: the difference of the two cos calls"] = (
        times["(cos of a tensor that requires grad)"] - times["(cos of a tensor without grad)"])
    for k, t in times.items():
        print(f"{k:55s} {t * 1e6:8.3f} us   ratio to reference {t / ref:6.3f}")


if __name__ == "__main__":
    main()
