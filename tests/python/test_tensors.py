"""Tensors in and out: a PyG-style edge_index and features flow through the simulated IPU and the CPU
kernels, the outputs come back with their dtypes and agree with PyTorch computing the same layer."""
import json

import numpy as np
import pytest
import torch

import tilesim
from conftest import run_cli


def ring_graph(n):
    src = torch.arange(n, dtype=torch.int64)
    dst = (src + 1) % n
    return torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])  # both directions, as PyG's undirected graphs


def gcn_reference(edge_index, n, x, weight, bias):
    """GCNConv (add self-loops, symmetric normalisation), written out in torch."""
    loops = torch.arange(n, dtype=torch.int64)
    src = torch.cat([edge_index[0], loops])
    dst = torch.cat([edge_index[1], loops])
    deg = torch.zeros(n).index_add_(0, dst, torch.ones(dst.numel()))
    norm = deg[src].rsqrt() * deg[dst].rsqrt()
    h = x @ weight
    out = torch.zeros(n, weight.shape[1]).index_add_(0, dst, h[src] * norm[:, None])
    return out + bias


def test_features_and_weights_flow_through_every_backend():
    n, f, c = 64, 8, 4
    edge_index = ring_graph(n)
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(n, f, generator=gen)
    weight = torch.randn(f, c, generator=gen)
    bias = torch.randn(c, generator=gen)
    g = tilesim.Graph.from_edge_index(edge_index, num_nodes=n, x=x)
    w = tilesim.Workload("ring_gcn", graph=g, model=[tilesim.layers.GCN(name="conv1", out=c)])
    assert w.num_features == f  # from x
    r = tilesim.run(w, backends=["ipu:bow", "cpu"], values={"conv1.weight": weight, "conv1.bias": bias}, repeats=1, warmup=0)
    assert r.exit_code == 0 and r.verified
    expected = gcn_reference(edge_index, n, x, weight, bias)
    for backend in ("ipu:bow", "cpu"):
        outputs = r.outputs[backend]
        last = r.report["results"][0]["ops"][-1]["op"] + ".out"
        out = outputs[last]
        assert isinstance(out, torch.Tensor) and out.dtype == torch.float32  # tensors in, tensors out
        assert tuple(out.shape) == (n, c)
        torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-4)
    # The report says the graph came from memory, with its sizes.
    assert r.report["workload"]["graph"]["edge_index"] == g.name
    assert r.report["workload"]["graph"]["num_edges"] == 2 * n


def test_numpy_in_numpy_out_and_int32_ids():
    n = 16
    ids = np.stack([np.arange(n), (np.arange(n) + 3) % n]).astype(np.int32)  # int32 is converted once
    g = tilesim.Graph.from_edge_index(ids)
    assert g.num_nodes == n and g.edge_index.dtype == np.int64
    x = np.random.default_rng(0).standard_normal((n, 4)).astype(np.float32)
    w = tilesim.Workload("np_sage", graph=g, num_features=4, model=[tilesim.layers.SAGE(out=3)])
    r = tilesim.run(w, backends="cpu", values={"x": x}, repeats=1, warmup=0)
    outs = r.outputs["cpu"]
    assert all(isinstance(a, np.ndarray) for a in outs.values())
    assert all(a.dtype in (np.float32, np.int32) for a in outs.values())


def test_a_pyg_like_object_without_pyg():
    class Data:  # what a torch_geometric.data.Batch carries, without importing PyG
        def __init__(self):
            self.edge_index = torch.tensor([[0, 1, 1, 2, 3, 4], [1, 0, 2, 1, 4, 3]])
            self.num_nodes = 5
            self.x = torch.ones(5, 3)
            self.batch = torch.tensor([0, 0, 0, 1, 1])

    g = tilesim.Graph.from_pyg(Data())
    assert g.num_graphs == 2 and g.to_dict()["num_graphs"] == 2
    w = tilesim.Workload("pyg_gin", graph=g, model=[tilesim.layers.GIN(out=2)])
    resolved = w.check()
    assert resolved["graph"]["num_nodes"] == 5 and w.num_features == 3
    r = tilesim.run(w, backends="cpu", repeats=1, warmup=0)
    assert r.verified


def test_gin_with_one_linear_and_a_linear_readout_run_and_name_the_output():
    """GINConv(Linear) and a torch.nn.Linear readout: the output is the readout's, and its width its out."""
    g = tilesim.Graph.from_edge_index(torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]]))
    w = tilesim.Workload("gin_readout", graph=g, num_features=3,
                         model=[tilesim.layers.GIN(out=4, nn="linear", activation="relu"), tilesim.layers.Linear(out=2)])
    resolved = w.check()
    assert resolved["model"][0]["nn"] == "linear" and "hidden" not in resolved["model"][0]
    r = tilesim.run(w, backends="cpu", repeats=1, warmup=0)
    assert r.verified
    assert r.output_name() == "linear_1.lin.out"
    assert r.output["cpu"].shape == (4, 2)
    with pytest.raises(tilesim.InputError, match="hidden"):
        tilesim.Workload("bad", graph=g, num_features=3, model=[tilesim.layers.GIN(out=4, nn="linear", hidden=8)]).check()


def test_generated_values_are_the_command_lines(tmp_path):
    """Without values, inputs come from the seed: the same outputs as a workload file run by the CLI."""
    w = tilesim.Workload.from_json("workloads/examples/small.json")
    a = tilesim.run(w, backends="cpu", repeats=1, warmup=0)
    b = tilesim.run(w, backends="cpu", repeats=1, warmup=0, seed=7)  # small.json's own seed
    c = tilesim.run(w, backends="cpu", repeats=1, warmup=0, seed=8)
    for name, array in a.outputs["cpu"].items():
        np.testing.assert_array_equal(array, b.outputs["cpu"][name])
    assert any(not np.array_equal(array, c.outputs["cpu"][name]) for name, array in a.outputs["cpu"].items())


@pytest.mark.parametrize("bad", [torch.zeros(2, 3, dtype=torch.float64), torch.zeros(2, 3, dtype=torch.int64)])
def test_values_are_converted_to_float32(bad):
    n = 6
    g = tilesim.Graph.from_edge_index(torch.tensor([[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0]]))
    w = tilesim.Workload("conv", graph=g, num_features=2, model=[tilesim.layers.GCN(name="c", out=3)])
    r = tilesim.run(w, backends="cpu", values={"c.weight": bad}, repeats=1, warmup=0)
    assert r.verified


def test_an_in_memory_graph_saved_is_the_same_graph(tmp_path):
    """Graph.save writes Matrix Market with the ids kept: the file-based workload gives the same cycles,
    and the file-based commands (placement here) take a workload with an in-memory graph."""
    n = 300
    rng = np.random.default_rng(3)
    edge_index = rng.integers(0, n - 10, size=(2, 2000))  # the last 10 nodes isolated: the order keeps them
    g = tilesim.Graph.from_edge_index(edge_index, num_nodes=n, symmetrize=True)
    in_memory = tilesim.Workload("mem", graph=g, num_features=32, model=[tilesim.layers.SAGE(out=8)])
    on_file = tilesim.Workload("mem", graph=g.save(tmp_path / "g.mtx"), num_features=32, model=[tilesim.layers.SAGE(out=8)])
    assert on_file.check()["graph"]["symmetrize"] is True
    a = tilesim.run(in_memory, backends="ipu:bow", timing_only=True)
    b = tilesim.run(on_file, backends="ipu:bow", timing_only=True)
    assert [op["cycles"] for op in a.report["results"][0]["ops"]] == [op["cycles"] for op in b.report["results"][0]["ops"]]
    assert [op["num_outputs"] for op in a.report["results"][0]["ops"]] == [op["num_outputs"] for op in b.report["results"][0]["ops"]]
    placed = tilesim.placement(in_memory, features=32)
    on_file.save(tmp_path / "w.json")
    code, out, err = run_cli("placement", tmp_path / "w.json", "--features", 32, "--json")
    assert code == 0, err
    from_file = json.loads(out)
    assert placed["graph"]["num_nodes"] == n == from_file["graph"]["num_nodes"]
    assert placed["graph"]["num_edges"] == from_file["graph"]["num_edges"]
    assert [p["exchange_bytes"] for p in placed["placements"]] == [p["exchange_bytes"] for p in from_file["placements"]]
    with pytest.raises(tilesim.InputError, match="without a batch vector"):
        tilesim.Graph.from_edge_index(edge_index, num_nodes=n, batch=np.zeros(n, dtype=np.int64)).save(tmp_path / "b.mtx")
