"""The same bad input gives the same message from Python as from the command line, raised as
tilesim.InputError (exit code 2) with the JSON path, and DoesNotFitError for what does not fit (3)."""
import json

import numpy as np
import pytest

import tilesim
from conftest import cli_error, write_json

BAD_WORKLOADS = {
    "unknown top-level key": {"name": "w", "ops": [{"op": "gather", "num_inputs": 4, "num_features": 2, "num_outputs": 3}], "colour": 1},
    "negative size": {"name": "w", "ops": [{"op": "gather", "num_inputs": -4, "num_features": 2, "num_outputs": 3}]},
    "unknown layer key": {"name": "w", "graph": {"preset": "cora"}, "model": [{"layer": "gcn", "out": 4, "dropout": 0.5}]},
    "unknown layer kind": {"name": "w", "graph": {"preset": "cora"}, "model": [{"layer": "transformer", "out": 4}]},
    "model entry not an object": {"name": "w", "graph": {"preset": "cora"}, "model": [7]},
    "bad name": {"name": "my run", "ops": [{"op": "gather", "num_inputs": 4, "num_features": 2, "num_outputs": 3}]},
    "model without graph": {"name": "w", "model": [{"layer": "gcn", "out": 4}]},
    "unknown preset": {"name": "w", "graph": {"preset": "nope"}, "model": [{"layer": "gcn", "out": 4}]},
    "missing graph file": {"name": "w", "graph": {"file": "no-such-file.txt"}, "num_features": 4, "model": [{"layer": "gcn", "out": 4}]},
    "edge_index in a file": {"name": "w", "graph": {"edge_index": "g"}, "num_features": 4, "model": [{"layer": "gcn", "out": 4}]},
}


@pytest.mark.parametrize("case", list(BAD_WORKLOADS))
def test_same_message_as_the_command_line(case, tmp_path):
    path = write_json(tmp_path / "w.json", BAD_WORKLOADS[case])
    message, code = cli_error("run", path, "--backends", "gpu-model:a100-40gb", "--out", tmp_path / "out")
    assert code == 2
    with pytest.raises(tilesim.InputError) as e:
        tilesim.Workload.from_json(path)
    assert str(e.value) == message
    assert e.value.exit_code == 2
    assert e.value.file == str(path)
    # The JSON path is in the message, after the file name.
    assert message.startswith(str(path) + ": ")
    # And run() on the file says it again.
    with pytest.raises(tilesim.InputError) as again:
        tilesim.run(str(path), backends="gpu-model:a100-40gb")
    assert str(again.value) == message


def test_invalid_json_same_message(tmp_path):
    path = tmp_path / "w.json"
    path.write_text('{"name": "w", "ops": [}')
    message, _ = cli_error("run", path)
    with pytest.raises(tilesim.InputError, match="expected valid JSON") as e:
        tilesim.Workload.from_json(path)
    assert str(e.value) == message


def test_errors_of_python_built_workloads_name_the_json_path():
    with pytest.raises(tilesim.InputError) as e:
        tilesim.Workload("w", graph=tilesim.Graph.preset("cora"), model=[tilesim.layers.GCN(out=0)])
    assert str(e.value) == "model[0].out: expected a positive integer, found 0"
    assert e.value.json_path == "model[0].out"
    with pytest.raises(tilesim.InputError, match=r"^model\[1\]: .*unknown key \"dropout\"|^model\[1\]\.dropout"):
        tilesim.Workload("w", graph=tilesim.Graph.preset("cora"), model=[tilesim.layers.GCN(out=4), tilesim.layers.GCN(out=4, dropout=0.5)])
    # Deferred checks: nothing is said until check().
    w = tilesim.Workload("w", graph=tilesim.Graph.preset("cora"), model=[tilesim.layers.GCN(out=-1)], check=False)
    with pytest.raises(tilesim.InputError, match=r"model\[0\]\.out"):
        w.check()


def test_command_line_options_checked_as_the_command_line_checks_them(tmp_path):
    w = tilesim.Workload.from_json("workloads/examples/small.json")
    message, _ = cli_error("run", "workloads/examples/small.json", "--seed", "-1")
    with pytest.raises(tilesim.InputError) as e:
        tilesim.run(w, backends="gpu-model:a100-40gb", seed=-1)
    assert str(e.value) == message
    message, _ = cli_error("run", "workloads/examples/small.json", "--backends", "tpu")
    with pytest.raises(tilesim.InputError) as e:
        tilesim.run(w, backends="tpu")
    assert str(e.value) == message
    message, _ = cli_error("run", "workloads/examples/small.json", "--repeats", "0")
    with pytest.raises(tilesim.InputError) as e:
        tilesim.run(w, backends="cpu", repeats=0)
    assert str(e.value) == message


def test_in_memory_graph_errors():
    with pytest.raises(tilesim.InputError, match=r"edge_index\[1\]\[2\]: expected a node id in \[0, 3\) \(num_nodes\), found 3"):
        g = tilesim.Graph.from_edge_index(np.array([[0, 1, 2], [1, 2, 3]]), num_nodes=3)
        tilesim.Workload("w", graph=g, num_features=4, model=[tilesim.layers.GCN(out=2)])
    with pytest.raises(tilesim.InputError, match=r"expected a \[2, E\] integer array"):
        tilesim.Graph.from_edge_index(np.zeros((3, 4), dtype=np.int64))
    with pytest.raises(tilesim.InputError, match=r"expected an integer array, found dtype float"):
        tilesim.Graph.from_edge_index(np.zeros((2, 4), dtype=np.float32))
    with pytest.raises(tilesim.InputError, match=r"batch\[2\]: expected a non-decreasing batch vector"):
        g = tilesim.Graph.from_edge_index(np.array([[0, 1, 2], [1, 2, 0]]), batch=np.array([0, 1, 0]))
        tilesim.Workload("w", graph=g, num_features=4, model=[tilesim.layers.GCN(out=2)])
    g = tilesim.Graph.from_edge_index(np.array([[0, 1, 2], [1, 2, 0]]))
    w = tilesim.Workload("w", graph=g, num_features=4, model=[tilesim.layers.GCN(out=2)])
    with pytest.raises(tilesim.InputError, match=r"^values\.x: expected an array of shape \[3, 4\] \(dimensions of size 1 may be left out\), found shape \[3, 5\]$"):
        tilesim.run(w, backends="cpu", values={"x": np.zeros((3, 5), dtype=np.float32)})
    with pytest.raises(tilesim.InputError, match=r"^values\.nope: expected the name of a value input of the workload \(x, "):
        tilesim.run(w, backends="cpu", values={"nope": np.zeros(3, dtype=np.float32)})
    # A workload naming an in-memory graph it was not given.
    with pytest.raises(tilesim.InputError, match=r"graph\.edge_index: expected the name of a graph handed over in memory"):
        tilesim.Workload.from_dict({"name": "w", "graph": {"edge_index": "missing"}, "num_features": 4, "model": [{"layer": "gcn", "out": 2}]})
    # Values JSON cannot hold.
    with pytest.raises(tilesim.InputError, match="expected values JSON can hold"):
        tilesim.Workload("w", graph=tilesim.Graph.preset("cora"), model=[tilesim.layers.GIN(out=4, eps=float("nan"))])


def test_does_not_fit_raises_with_exit_code_3(tmp_path):
    document = {"name": "huge", "ops": [{"op": "gather", "num_inputs": 30000000, "num_features": 16, "num_outputs": 1024}]}
    path = write_json(tmp_path / "huge.json", document)
    message, code = cli_error("run", path, "--backends", "ipu:bow", "--timing-only", "--out", tmp_path / "o")
    assert code == 3
    with pytest.raises(tilesim.DoesNotFitError) as e:
        tilesim.run(str(path), backends="ipu:bow", timing_only=True)
    assert str(e.value) == message and e.value.exit_code == 3


def test_cli_in_process_returns_the_exit_code(capfd):
    assert tilesim.cli(["run", "no-such-workload.json"]) == 2
    err = capfd.readouterr().err
    assert "tilesim: error: no-such-workload.json" in err
    with pytest.raises(tilesim.InputError, match="^no-such-workload.json: "):
        tilesim.cli(["run", "no-such-workload.json"], check=True)
    assert json.loads(json.dumps(tilesim.backends()))  # a list the JSON form holds
