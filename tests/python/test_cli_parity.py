"""tilesim.run gives what `tilesim run` gives on the same workload and seed: identical simulated cycles
and modeled times, the same report (but for its time stamp and measured times)."""
import json

import pytest

import tilesim
from conftest import REPO, run_cli

CASES = [
    ("small.json", "ipu:bow,gpu-model:a100-40gb:eager,gpu-model:a100-40gb", []),
    ("gcn_cora.json", "ipu:bow,gpu-model:a100-40gb:eager", ["--timing-only"]),
    pytest.param("gcn_cora_train.json", "ipu:bow", ["--steps", "2"], marks=pytest.mark.slow),
    # a loader: batches made on the host
    pytest.param("gin_qm9_pad.json", "ipu:bow", ["--batches", "1"], marks=pytest.mark.slow),
]


# What differs from one run to the next: the time stamp and the host's own wall times (and the
# simulator's speed computed from them; a loader's measured sampling times and what is combined with
# them); every simulated and modeled figure must be equal.
RUN_TO_RUN = {"created_utc", "wall_s", "engine_wall_s", "simulated_cycles_per_s", "preprocess_s", "sampling_s", "host_vs_device"}


def comparable(value):
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k not in RUN_TO_RUN and not k.endswith("_wall_s")}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


@pytest.mark.parametrize("name,backends,flags", CASES, ids=[(c.values if hasattr(c, "values") else c)[0] for c in CASES])
def test_same_cycles_as_the_command_line(name, backends, flags, tmp_path):
    path = REPO / "workloads" / "examples" / name
    code, _, err = run_cli("run", path, "--backends", backends, "--out", tmp_path / "cli", *flags)
    assert code == 0, err
    cli_report = json.loads((tmp_path / "cli" / "report.json").read_text())
    def option(flag):
        return int(flags[flags.index(flag) + 1]) if flag in flags else None
    r = tilesim.run(str(path), backends=backends.split(","), out=tmp_path / "py", timing_only="--timing-only" in flags,
                    steps=option("--steps"), batches=option("--batches"))
    assert r.exit_code == 0
    # The file Python wrote is report.json's text, and to_json() returns it.
    assert (tmp_path / "py" / "report.json").read_text() == r.to_json()
    py_report = r.report
    assert [x["backend"] for x in py_report["results"]] == [x["backend"] for x in cli_report["results"]]
    for a, b in zip(cli_report["results"], py_report["results"]):
        assert [op["cycles"] for op in a["ops"]] == [op["cycles"] for op in b["ops"]]
        assert [op["time_s"] for op in a["ops"]] == [op["time_s"] for op in b["ops"]]
        assert a["cycles"] == b["cycles"]
    assert comparable(cli_report) == comparable(py_report)


def test_table_is_what_the_command_line_prints(tmp_path):
    path = REPO / "workloads" / "examples" / "small.json"
    code, out, _ = run_cli("run", path, "--backends", "gpu-model:a100-40gb", "--out", tmp_path)
    assert code == 0
    r = tilesim.run(str(path), backends="gpu-model:a100-40gb", out=tmp_path)
    assert r.table == out
    assert r.report_path == str(tmp_path / "report.json")
    rows = r.rows()
    assert len(rows) == 2 and {row["op"] for row in rows} == {"gather_0", "scatter_add_1"}
    df = r.to_pandas()
    assert list(df["op"]) == [row["op"] for row in rows]


def test_training_losses_come_back():
    r = tilesim.run("workloads/examples/gcn_cora_train.json", backends=["ipu:bow", "cpu"], steps=3, repeats=1, warmup=0)
    losses = r.losses
    assert set(losses) == {"ipu:bow", "cpu"} and all(len(v) == 3 for v in losses.values())
    assert abs(losses["ipu:bow"][0] - losses["cpu"][0]) <= 1e-4 * max(1.0, abs(losses["cpu"][0]))
    assert losses["cpu"][2] < losses["cpu"][0]  # Adam lowers the loss on Cora's training nodes
