"""The command line's other subcommands, called from Python: the same files, returned as data."""
import json

import pytest

import tilesim
from conftest import REPO, run_cli, write_json

TINY_SWEEP = {
    "name": "tiny",
    "ops": ["gather", "scatter_add"],
    "sizes": {"num_inputs": [16, 64], "num_features": [16], "num_outputs": [32, 128]},
    "backends": ["ipu:bow", "gpu-model:a100-40gb:eager"],
    "repeats": 1,
    "seed": 0,
    "indices": "uniform",
    "ipu": {"verify": False},
}


def test_machines_and_their_figures():
    entries = tilesim.machines()
    assert {"ipu:bow", "gpu-model:a100-40gb"} <= {e["backend"] for e in entries}
    bow = tilesim.Machine.load("bow")
    assert bow.backend == "ipu:bow" and bow.kind == "ipu"
    tiles = bow.figures["chip.num_tiles"]
    assert tiles.value == 1472 and "datasheet" in tiles.source
    assert bow.value("chip.sram_bytes_per_tile") == 624 * 1024
    assert all(isinstance(f.source, str) and f.source for f in bow.figures.values())
    pod = tilesim.Machine.load("ipu:bow-2000")
    assert pod.value("chip_file.chip.num_tiles") == 1472
    try:
        tilesim.Machine.load("tpu-v9")
        raise AssertionError("expected an InputError")
    except tilesim.InputError as e:
        assert "ipu:bow" in str(e)


def test_sweep_rows_equal_the_command_lines(tmp_path):
    spec = write_json(tmp_path / "tiny.json", TINY_SWEEP)
    code, _, err = run_cli("sweep", spec, "--out", tmp_path / "cli")
    assert code == 0, err
    result = tilesim.sweep(TINY_SWEEP, out=tmp_path / "py")
    assert len(result) == 2 * 2 * 2 * 2  # ops x num_inputs x num_outputs x backends
    cli_rows = (tmp_path / "cli" / "results.csv").read_text().splitlines()
    py_rows = (tmp_path / "py" / "results.csv").read_text().splitlines()
    assert cli_rows[0] == py_rows[0]
    header = cli_rows[0].split(",")
    keep = [i for i, h in enumerate(header) if "host" not in h and h not in ("created_utc", "wall_s")]
    def key(rows):
        return sorted(tuple(r.split(",")[i] for i in keep) for r in rows[1:])
    assert key(cli_rows) == key(py_rows)
    assert result.sweep["name"] == "tiny"
    assert result.to_pandas().shape[0] == 16
    # A second sweep into the same folder without --resume or --overwrite is refused, as on the command line.
    try:
        tilesim.sweep(TINY_SWEEP, out=tmp_path / "py")
        raise AssertionError("expected an InputError")
    except tilesim.InputError as e:
        assert "--resume" in str(e) or "--overwrite" in str(e)
    # Tables and figures of the results.
    text = tilesim.report(result.path, "markdown", baselines=["gpu-model:a100-40gb:eager"], targets=["ipu:bow"])
    assert "| gather | Bow IPU (simulated) | A100-40GB model (eager) | 4 |" in text
    figures = tilesim.roofline(result.path, out=tmp_path / "plots")
    assert figures.of_type(".pdf") and figures.of_type(".png")
    # The plotted points as data: the IPU's bandwidth points, one per gather point and memory level.
    points = figures.data()["bandwidth_ipu-bow.dat"]
    assert {p["set"] for p in points} == {"gather at tile_sram", "gather at exchange", "scatter_add at tile_sram", "scatter_add at exchange"}
    assert all(p["bytes_per_s"] > 0 and p["num_features"] == 16 for p in points)
    assert len(points) == 2 * 2 * 4  # ops x levels x (num_inputs x num_outputs)
    surface = tilesim.plot_surface(result.path, baselines=["gpu-model:a100-40gb:eager"], targets=["ipu:bow"], out=tmp_path / "surface")
    assert surface.of_type(".pdf") and not set(surface.files) & set(figures.files)


def test_placement_as_data():
    answer = tilesim.placement(graph="cora", features=16)
    code, out, err = run_cli("placement", "--graph", "cora", "--features", "16", "--json")
    assert code == 0, err
    def without_wall_times(value):
        if isinstance(value, dict):
            return {k: without_wall_times(v) for k, v in value.items() if not k.endswith("_s")}
        if isinstance(value, list):
            return [without_wall_times(v) for v in value]
        return value
    assert without_wall_times(answer) == without_wall_times(json.loads(out))
    assert answer["num_features"] == 16 and answer["graph"]["num_nodes"] == 2708


@pytest.mark.slow  # the hydronet suite's 1,188 simulated points
def test_validate_returns_the_suite(tmp_path):
    v = tilesim.validate(out=tmp_path / "validation", plots=False)
    assert isinstance(v, dict) and v
    text = json.dumps(v)
    assert "gather" in text and "scatter_add" in text


def test_version_and_backends():
    # torch in the same process sets OpenMP to its own thread count; the commands still run with the
    # executable's (the version text names it), and torch's own setting is left as it was.
    import torch
    torch.set_num_threads(1)
    assert tilesim.version().startswith("tilesim ")
    code, out, _ = run_cli("--version")
    assert out.strip() == tilesim.version()
    assert torch.get_num_threads() == 1
    families = tilesim.backends()
    assert any(f.get("family") == "ipu" for f in families)


@pytest.mark.slow  # the whole-model suite runs its 14 comparable entries (about 25 s)
def test_validate_published_suite_as_markdown(tmp_path):
    v = tilesim.validate("models", out=tmp_path / "v", plots=False, format="markdown")
    md = (tmp_path / "v" / "validation.md").read_text()
    assert "whole-model suite" in md and "| entry |" in md
    assert list(v["published_suites"]) == ["whole-model"]
    # The answer comes from memory; the file the command's writer left says the same.
    assert v == json.loads((tmp_path / "v" / "validation.json").read_text())
    assert v["files"]["validation_md"] == str(tmp_path / "v" / "validation.md")


def test_validate_and_calibrate_model_refuse_bad_options(tmp_path):
    with pytest.raises(tilesim.InputError, match="nope"):
        tilesim.validate("nope", out=tmp_path / "x")
    with pytest.raises(tilesim.InputError, match="--format"):
        tilesim.validate("models", out=tmp_path / "y", format="html")
    with pytest.raises(tilesim.InputError, match="--gpu"):
        tilesim.calibrate_model()
    with pytest.raises(tilesim.InputError, match="fit_carried_over_from"):
        tilesim.calibrate_model(gpu="h100-sxm")


def test_run_takes_the_available_memory_proportion(tmp_path):
    w = tilesim.Workload("amp", ops=[tilesim.Op("gather", num_inputs=4096, num_features=512, num_outputs=32768)])
    r = tilesim.run(w, backends=["ipu:bow"], timing_only=True, available_memory_proportion=0.1)
    plan = r.report["results"][0]["ops"][0]["plan"]["temporary_memory"]
    assert plan["available_memory_proportion"] == 0.1
    with pytest.raises(tilesim.InputError):
        tilesim.run(w, backends=["ipu:bow"], timing_only=True, available_memory_proportion=1.5)


def test_sweep_spec_holding_a_workload_object(tmp_path):
    """A workload sweep's spec with a Workload (and an in-memory Graph among an axis's values): written inline,
    the in-memory graph beside it as Matrix Market; one row per point, the axis's column filled."""
    import numpy as np
    w = tilesim.Workload("gcn_er", graph=tilesim.Graph.generator("erdos_renyi", num_nodes=256, num_edges=1024), num_features=16,
                         model=[tilesim.layers.GCN(out=16, activation="relu"), tilesim.layers.GCN(out=4)])
    spec = {"name": "widths", "workload": w, "axes": {"model[*].out": [8, 32]}, "backends": ["gpu-model:a100-40gb:eager"]}
    r = tilesim.sweep(spec, out=tmp_path / "widths", quiet=True)
    assert [row["model[*].out"] for row in r.rows] == ["8", "32"]
    assert all(row["run"] == "forward" and row["status"] == "ok" and float(row["total_time_s"]) > 0 for row in r.rows)
    assert r.sweep["points"] == 2 and r.sweep["workload"]["name"] == "gcn_er"
    # A graph handed over in memory, as an axis's value.
    n = 64
    ring = tilesim.Graph.from_edge_index(np.array([list(range(n)), [(i + 1) % n for i in range(n)]]), num_nodes=n, name="ring")
    spec = {"name": "graphs", "workload": w, "axes": {"graph": [ring, {"preset": "cora"}]}, "backends": ["gpu-model:a100-40gb:eager"]}
    r = tilesim.sweep(spec, out=tmp_path / "graphs", quiet=True)
    assert len(r) == 2 and r.rows[1]["graph"] == '{"preset":"cora"}'
    assert '.mtx"' in r.rows[0]["graph"] and '"matrix_market"' in r.rows[0]["graph"]
    # A Workload as the spec itself, with axes=.
    r = tilesim.sweep(w, axes={"model[*].out": [8]}, backends="gpu-model:a100-40gb:eager", out=tmp_path / "object", quiet=True)
    assert len(r) == 1 and r.sweep["name"] == "gcn_er_sweep"
    # A bad point value: the workload reader's message, with the point's values, before any row.
    bad = dict(spec, name="bad", axes={"model[*].out": [8, 0]})
    with pytest.raises(tilesim.InputError, match=r"point 2 of 2 \(model\[\*\]\.out=0\).*model\[0\]\.out: expected a positive integer, found 0"):
        tilesim.sweep(bad, out=tmp_path / "bad", quiet=True)
    assert not (tmp_path / "bad").exists()
