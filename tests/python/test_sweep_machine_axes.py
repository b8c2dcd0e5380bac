"""tilesim.sweep(workload, machine_axes=...): a Workload swept over its backends' machine figures (each
combination a what-if machine, named as an op sweep's machine axes name them), and SweepResult.frame:
the rows as a DataFrame with the base backend and each overridden figure as columns."""
import math

import pytest

import tilesim

BOW_AXES = {"chip.sram_bytes_per_tile": {"scale": [0.5, 2]}, "chip.exchange_bytes_per_cycle": [4, 8]}


def small_gcn():
    return tilesim.Workload("gcn_er", graph=tilesim.Graph.generator("erdos_renyi", num_nodes=256, num_edges=1024), num_features=16,
                            model=[tilesim.layers.GCN(out=16, activation="relu"), tilesim.layers.GCN(out=4)])


def test_workload_over_two_machine_figures(tmp_path):
    r = tilesim.sweep(small_gcn(), backends=["ipu:bow"], machine_axes=BOW_AXES, out=tmp_path / "machines", quiet=True)
    # Figures in path order, the last fastest, values as the op sweep writes them.
    assert [row["backend"] for row in r.rows] == [
        "ipu:bow{chip.exchange_bytes_per_cycle=4;chip.sram_bytes_per_tile*=0.5}",
        "ipu:bow{chip.exchange_bytes_per_cycle=4;chip.sram_bytes_per_tile*=2}",
        "ipu:bow{chip.exchange_bytes_per_cycle=8;chip.sram_bytes_per_tile*=0.5}",
        "ipu:bow{chip.exchange_bytes_per_cycle=8;chip.sram_bytes_per_tile*=2}",
    ]
    assert r.sweep["name"] == "gcn_er_machines" and all(row["status"] == "ok" for row in r.rows)
    f = r.frame
    assert f is r.frame  # made once
    assert list(f["base_backend"]) == ["ipu:bow"] * 4
    assert list(f.columns).index("base_backend") == list(f.columns).index("backend") + 1
    sram = tilesim.Machine.load("bow").value("chip.sram_bytes_per_tile")
    assert list(f["chip.sram_bytes_per_tile"]) == [sram / 2, sram * 2] * 2  # the scaled figure's resolved value
    assert list(f["chip.sram_bytes_per_tile scale"]) == [0.5, 2.0] * 2
    assert list(f["chip.exchange_bytes_per_cycle"]) == [4.0, 4.0, 8.0, 8.0]
    assert "chip.exchange_bytes_per_cycle scale" not in f.columns
    for column in ("cycles", "total_time_s", "step_median_s", "chip.sram_bytes_per_tile", "chip.exchange_bytes_per_cycle"):
        assert f[column].dtype.kind in "if", column
    assert (f["cycles"] > 0).all() and (f["total_time_s"] > 0).all()
    # Twice the exchange bandwidth never costs cycles.
    by = f.set_index(["chip.exchange_bytes_per_cycle", "chip.sram_bytes_per_tile"])["cycles"]
    assert by[(8.0, sram / 2)] <= by[(4.0, sram / 2)] and by[(8.0, sram * 2)] <= by[(4.0, sram * 2)]


def test_machine_axes_per_backend_with_workload_axes(tmp_path):
    w = small_gcn()
    r = tilesim.sweep(w, axes={"model[*].out": [8, 16]}, backends=["ipu:bow", "gpu-model:a100-40gb:eager"],
                      machine_axes={"gpu-model:a100-40gb:eager": {"chip.hbm_bytes_per_s": [1e12, 2e12]}}, out=tmp_path / "per", quiet=True)
    gpu = ["gpu-model:a100-40gb{chip.hbm_bytes_per_s=1000000000000}:eager", "gpu-model:a100-40gb{chip.hbm_bytes_per_s=2000000000000}:eager"]
    assert [row["backend"] for row in r.rows] == (["ipu:bow"] + gpu) * 2  # each point's backends in order
    f = r.frame
    assert list(f["base_backend"]) == ["ipu:bow", "gpu-model:a100-40gb:eager", "gpu-model:a100-40gb:eager"] * 2
    hbm = list(f["chip.hbm_bytes_per_s"])
    assert math.isnan(hbm[0]) and hbm[1:3] == [1e12, 2e12]  # the IPU sweeps no such figure
    assert list(f["model[*].out"]) == [8, 8, 8, 16, 16, 16]
    assert f["total_time_s"].dtype.kind == "f" and (f["total_time_s"] > 0).all()
    # A single backend as a string, axes on it by its name.
    r = tilesim.sweep(w, backends="ipu:bow", machine_axes={"ipu:bow": {"chip.exchange_bytes_per_cycle": {"from": 4, "to": 8, "step": 4}}},
                      out=tmp_path / "one", quiet=True)
    assert list(r.frame["chip.exchange_bytes_per_cycle"]) == [4.0, 8.0]


def test_frame_of_an_op_sweep_reads_machines_json(tmp_path):
    """An op sweep file's own machine axes: the scaled figure's value from the machines.json it writes."""
    spec = {"name": "tiny_what_if", "ops": ["gather"], "sizes": {"num_inputs": [64], "num_features": [16], "num_outputs": [128]},
            "backends": [{"backend": "ipu:bow", "machine": {"chip.tile_clock_hz": {"scale": [1, 2]}}}, "gpu-model:a100-40gb:eager"]}
    f = tilesim.sweep(spec, out=tmp_path / "op", quiet=True).frame
    clock = tilesim.Machine.load("bow").value("chip.tile_clock_hz")
    bow = f[f["base_backend"] == "ipu:bow"]
    assert list(bow["chip.tile_clock_hz"]) == [clock, 2 * clock] and list(bow["chip.tile_clock_hz scale"]) == [1.0, 2.0]
    assert math.isnan(f[f["backend"] == "gpu-model:a100-40gb:eager"]["chip.tile_clock_hz"].iloc[0])
    assert f["time_s"].dtype.kind == "f" and f["cycles"].dtype.kind in "if"


def test_machine_axes_errors(tmp_path):
    w = small_gcn()
    out = tmp_path / "never"
    with pytest.raises(tilesim.InputError, match=r"machine_axes\['ipu:mk2'\]: expected a backend among backends=\['ipu:bow'\], found \"ipu:mk2\""):
        tilesim.sweep(w, backends=["ipu:bow"], machine_axes={"ipu:mk2": {"chip.num_tiles": [736]}}, out=out, quiet=True)
    with pytest.raises(tilesim.InputError, match=r"machine_axes: expected a backend that names its machine .* found \"cpu\""):
        tilesim.sweep(w, backends=["ipu:bow", "cpu"], machine_axes=BOW_AXES, out=out, quiet=True)
    with pytest.raises(tilesim.InputError, match=r"not both"):
        tilesim.sweep(w, backends=["ipu:bow"], machine_axes={"ipu:bow": BOW_AXES, "chip.num_tiles": [736]}, out=out, quiet=True)
    with pytest.raises(tilesim.InputError, match=r"backends\[0\]\.machine\[\"chip\.num_tiles\"\]\[1\]: expected each value once, found 736 twice"):
        tilesim.sweep(w, backends=["ipu:bow"], machine_axes={"chip.num_tiles": [736, 736]}, out=out, quiet=True)
    with pytest.raises(tilesim.InputError, match=r"backends\[0\]\.machine\[\"chip\.num_tiles\"\]: expected a non-empty"):
        tilesim.sweep(w, backends=["ipu:bow"], machine_axes={"chip.num_tiles": []}, out=out, quiet=True)
    with pytest.raises(tilesim.InputError, match=r"machine_axes= only with a Workload"):
        tilesim.sweep({"name": "s", "workload": w, "axes": {"seed": [0]}, "backends": ["ipu:bow"]}, machine_axes=BOW_AXES, out=out, quiet=True)
    # A path that names no figure: the engine's message, when the sweep makes its backends, before any row.
    with pytest.raises(tilesim.InputError, match=r"chip\.sram_per_tile: expected a figure of the IPU machine"):
        tilesim.sweep(w, backends=["ipu:bow"], machine_axes={"chip.sram_per_tile": [1]}, out=out, quiet=True)
    assert not (out / "results.csv").exists()
