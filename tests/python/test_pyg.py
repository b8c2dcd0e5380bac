"""tilesim for PyG users: torch-cpu training with torch imported in the same process (the engine runs
without the GIL), every backend failure as tilesim.Error, a comparison that survives one backend's
refusal, summary() and output, progress on sys.stderr, PyG's spellings and weight layout, sweeping a
Workload object and the reprs."""
import math

import numpy as np
import pytest
import torch  # imported first on purpose: torch's autograd refuses to run while its caller holds the GIL

import tilesim

# 300000 x 1024 float32 (1.2 GB): more than one Bow IPU's SRAM, well within an A100's memory (the same
# gather as the bad-input corpus's cli/does_not_fit).
HUGE_GATHER = tilesim.Op("gather", num_inputs=300000, num_features=1024, num_outputs=64)


def ring_graph(n, features=8):
    src = torch.arange(n, dtype=torch.int64)
    dst = (src + 1) % n
    edge_index = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])
    x = torch.randn(n, features, generator=torch.Generator().manual_seed(1))
    return tilesim.Graph.from_edge_index(edge_index, num_nodes=n, x=x)


def gcn_training(steps=3):
    return tilesim.Workload("ring_gcn_train", graph=ring_graph(64),
                            model=[tilesim.layers.GCN(name="conv1", out=16, activation="relu"), tilesim.layers.GCN(name="conv2", out=4)],
                            train=tilesim.Train(task="node", loss="cross_entropy", optimizer=tilesim.Adam(lr=0.01), steps=steps))


def test_torch_cpu_trains_with_torch_imported():
    r = tilesim.run(gcn_training(), backends="torch-cpu", steps=3, quiet=True)
    assert r.exit_code == 0
    losses = r.losses["torch-cpu"]
    assert len(losses) == 3 and all(math.isfinite(v) for v in losses)
    assert r.result("torch-cpu")["kind"] == "measured"


def test_a_failure_that_is_no_tilesim_error_is_a_tilesim_error_with_exit_code_1():
    # Text that is not JSON fails inside the C++ parser (a std::exception of nlohmann::json, not one of
    # tilesim's): it comes out as tilesim.Error, exit code 1, with the parser's message.
    with pytest.raises(tilesim.Error) as e:
        tilesim._native.core.check_workload("{not json", "", {})
    assert not isinstance(e.value, tilesim.InputError)
    assert e.value.exit_code == 1
    assert "parse" in str(e.value)


def test_a_backend_that_refuses_leaves_the_others_results_on_the_error(tmp_path):
    w = tilesim.Workload("huge_gather", ops=[HUGE_GATHER])
    with pytest.raises(tilesim.DoesNotFitError) as e:
        tilesim.run(w, backends=["ipu", "gpu-model:a100-40gb"], out=tmp_path, quiet=True)
    assert e.value.exit_code == 3
    assert "ipu:bow: does not fit: op \"gather_0\"" in str(e.value)
    r = e.value.result
    assert r is not None and r.exit_code == 3
    assert r.ran == ["gpu-model:a100-40gb"]
    assert list(r.refused) == ["ipu:bow"] and "does not fit on machine bow" in r.refused["ipu:bow"]
    assert r.result("gpu-model:a100-40gb")["time_s"] > 0
    assert (tmp_path / "report.json").exists()
    assert "ipu:bow: REFUSED, does not fit" in r.table
    s = r.summary()
    refused = s[s.backend == "ipu:bow"]
    assert list(refused.status) == ["refused"] and refused.time_s.isna().all()
    assert "refused" in repr(r)


def test_every_backend_refusing_raises_without_a_result():
    w = tilesim.Workload("huge_gather", ops=[HUGE_GATHER])
    with pytest.raises(tilesim.DoesNotFitError) as e:
        tilesim.run(w, backends="ipu", quiet=True)
    assert e.value.result is None


def test_summary_is_one_row_per_backend_and_layer_with_speedups():
    g = ring_graph(128)
    w = tilesim.Workload("ring_gcn", graph=g, model=[tilesim.layers.GCN(name="conv1", out=16, activation="relu"),
                                                      tilesim.layers.GCN(name="conv2", out=4)])
    r = tilesim.run(w, backends=["ipu:bow", "cpu", "gpu-model:a100-40gb"], repeats=1, warmup=0, quiet=True)
    s = r.summary(baseline="cpu")
    assert list(s.columns) == ["backend", "kind", "mode", "status", "layer", "layer_kind", "time_s", "share", "refused", "baseline", "speedup"]
    assert len(s) == 3 * 3  # three backends x (conv1, conv2, total)
    assert set(s.layer) == {"conv1", "conv2", "(total)"}
    assert dict(zip(s.backend, s.kind)) == {"ipu:bow": "simulated", "cpu": "measured", "gpu-model:a100-40gb": "modeled"}
    ipu = s[s.backend == "ipu:bow"].set_index("layer")
    cpu = s[s.backend == "cpu"].set_index("layer")
    assert ipu.loc["(total)", "time_s"] == pytest.approx(r.result("ipu:bow")["time_s"])
    assert ipu.loc["conv1", "speedup"] == pytest.approx(cpu.loc["conv1", "time_s"] / ipu.loc["conv1", "time_s"])
    assert (cpu.speedup == 1.0).all()
    assert ipu.loc["(total)", "share"] == 1.0
    with pytest.raises(KeyError, match="torch-cpu"):
        r.summary(baseline="torch-cpu")
    # The model's output, per backend that computed values; the model predicts times only.
    assert set(r.output) == {"ipu:bow", "cpu"}
    assert tuple(r.output["cpu"].shape) == (128, 4)
    torch.testing.assert_close(r.output["ipu:bow"], r.output["cpu"], rtol=1e-4, atol=1e-4)
    # to_pandas keeps its per-op rows.
    assert len(r.to_pandas()) == len(r.rows())


def test_progress_goes_to_sys_stderr_and_quiet_silences_it(capsys):
    w = tilesim.Workload("tiny", ops=[tilesim.Op("gather", num_inputs=64, num_features=8, num_outputs=32)])
    tilesim.run(w, backends="gpu-model:a100-40gb")
    assert "tilesim: running gpu-model:a100-40gb" in capsys.readouterr().err  # capsys sees sys.stderr alone, not fd 2
    tilesim.run(w, backends="gpu-model:a100-40gb", quiet=True)
    assert capsys.readouterr().err == ""


def test_pyg_spellings_of_layer_widths():
    assert tilesim.layers.GCN(out_channels=16).to_dict() == {"layer": "gcn", "out": 16}
    # GATConv's dropout is on the attention coefficients: tilesim's attention_dropout.
    assert tilesim.layers.GAT(out_channels=8, heads=8, dropout=0.6).to_dict() == {"layer": "gat", "out": 8, "heads": 8, "attention_dropout": 0.6}
    with pytest.raises(tilesim.InputError, match="attention_dropout"):
        tilesim.layers.GAT(out=8, dropout=0.6, attention_dropout=0.5)
    with pytest.raises(tilesim.InputError, match="out_channels"):
        tilesim.layers.GCN(out=8, out_channels=16)
    g = ring_graph(16, features=8)
    tilesim.Workload("ok", graph=g, model=[tilesim.layers.GCN(in_channels=8, out_channels=16), tilesim.layers.GCN(in_channels=16, out_channels=4)])
    with pytest.raises(tilesim.InputError) as e:
        tilesim.Workload("bad", graph=g, model=[tilesim.layers.GCN(in_channels=8, out_channels=16), tilesim.layers.GCN(in_channels=32, out_channels=4)])
    assert str(e.value) == "model[1].in_channels: expected 16 (the layer's input width, from model[0]'s output), found 32"


def test_pyg_weight_layout_is_explicit_for_square_weights():
    n, f, c = 32, 8, 4
    g = ring_graph(n, features=f)
    w = tilesim.Workload("ring", graph=g, model=[tilesim.layers.GCN(name="conv1", out=c)])
    gen = torch.Generator().manual_seed(3)
    lin = torch.randn(c, f, generator=gen)  # torch.nn.Linear / PyG: [out, in]
    pyg = tilesim.run(w, backends="cpu", values={"conv1.weight": lin}, weights_layout="pyg", repeats=1, warmup=0, quiet=True)
    ours = tilesim.run(w, backends="cpu", values={"conv1.weight": lin.T.contiguous()}, repeats=1, warmup=0, quiet=True)
    torch.testing.assert_close(pyg.output["cpu"], ours.output["cpu"])
    # PyG's shape without the option: refused, pointing to it.
    with pytest.raises(tilesim.InputError, match='weights_layout="pyg"'):
        tilesim.run(w, backends="cpu", values={"conv1.weight": lin}, quiet=True)
    # A square weight's layout cannot be told from its shape: it must be named.
    square = tilesim.Workload("square", graph=g, model=[tilesim.layers.GCN(name="conv1", out=f)])
    with pytest.raises(tilesim.InputError, match="square weight"):
        tilesim.run(square, backends="cpu", values={"conv1.weight": torch.eye(f)}, quiet=True)
    tilesim.run(square, backends="cpu", values={"conv1.weight": torch.eye(f)}, weights_layout="tilesim", repeats=1, warmup=0, quiet=True)


def test_sweep_takes_a_workload(tmp_path):
    w = tilesim.Workload("sage_cora_neighbor", graph=tilesim.Graph.preset("cora"),
                         model=[tilesim.layers.SAGE(name="conv1", out=16, activation="relu"), tilesim.layers.SAGE(name="conv2", out=7)],
                         train=tilesim.Train(task="node", loss="cross_entropy", optimizer=tilesim.Adam(lr=0.01)),
                         loader=tilesim.Loader("neighbor", batch_size=64, fanouts=[5, 5], batches=1))
    spec = {"name": "cora_batches", "workload": w, "batch_sizes": [32, 64], "backends": ["gpu-model:a100-40gb:eager"], "batches": 1}
    r = tilesim.sweep(spec, out=tmp_path / "dict", quiet=True)
    assert [row["batch_size"] for row in r.rows] == ["32", "64"]
    r2 = tilesim.sweep(w, out=tmp_path / "object", batch_sizes=[32], backends=["gpu-model:a100-40gb:eager"], batches=1, quiet=True)
    assert len(r2) == 1 and r2.sweep["name"] == "sage_cora_neighbor_batch_sizes"
    assert "1 rows" in repr(r2) and "gpu-model:a100-40gb:eager" in repr(r2)


def test_reprs_show_sizes_model_backends_and_times():
    g = ring_graph(16, features=8)
    assert repr(g) == f"Graph(in memory {g.name!r}: 16 nodes, 32 edges, x [16, 8] (8 features))"
    w = tilesim.Workload("ring", graph=g, model=[tilesim.layers.GCN(out=4)])
    assert "16 nodes, 32 edges" in repr(w) and "GCN(out=4)" in repr(w) and "num_features=8" in repr(w)
    r = tilesim.run(w, backends="gpu-model:a100-40gb", quiet=True)
    assert repr(r).startswith("<tilesim.Result 'ring': gpu-model:a100-40gb modeled ") and repr(r).endswith("exit_code=0>")
