"""Every shipped example round-trips between JSON and Python, and the objects say the same as the files."""
import json

import pytest

import tilesim
from conftest import EXAMPLES


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_example_round_trips(path):
    document = json.loads(path.read_text())
    w = tilesim.Workload.from_json(path)
    assert w.to_dict() == document
    # Key order too: the Python object writes the file it read.
    assert list(w.to_dict()) == list(document)
    assert json.loads(w.to_json()) == document
    # Read back from the object's own JSON (same folder, so relative paths resolve the same way).
    again = tilesim.Workload.from_dict(json.loads(w.to_json()), source_file=str(path))
    assert again.check() == w.check()


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_objects_are_the_formats_concepts(path):
    w = tilesim.Workload.from_json(path)
    document = json.loads(path.read_text())
    if "model" in document:
        assert all(isinstance(layer, tilesim.layers.Layer) for layer in w.model)
        assert [layer.to_dict() for layer in w.model] == document["model"]
        assert [layer.kind for layer in w.model] == [d["layer"] for d in document["model"]]
    if "ops" in document:
        assert all(isinstance(op, tilesim.Op) for op in w.ops)
    if "graph" in document:
        assert isinstance(w.graph, tilesim.Graph) and w.graph.to_dict() == document["graph"]


def test_a_workload_built_in_python_equals_the_shipped_file(tmp_path):
    from conftest import REPO
    path = REPO / "workloads" / "examples" / "gcn_cora_train.json"
    built = tilesim.Workload(
        "gcn_cora_train", seed=0,
        graph=tilesim.Graph.file("../data/cora/cora.cites", format="edge_list", symmetrize=True, deduplicate=True,
                                 remove_self_loops=True),
        num_features=1433,
        model=[tilesim.layers.GCN(name="conv1", out=16, activation="relu"), tilesim.layers.GCN(name="conv2", out=7)],
        train=tilesim.Train(task="node", loss="cross_entropy", train_fraction=0.052,
                            optimizer=tilesim.Adam(lr=0.01, weight_decay=5e-4), steps=5),
        source_file=str(path))
    assert built.to_dict() == json.loads(path.read_text())
    # Saved and read back, it is the same workload again.
    out = tmp_path / "w.json"
    built.save(out)
    assert json.loads(out.read_text()) == built.to_dict()


def test_resolved_workload_matches_the_reports_echo(tmp_path):
    from conftest import REPO, run_cli
    path = REPO / "workloads" / "examples" / "small.json"
    code, _, err = run_cli("run", path, "--backends", "gpu-model:a100-40gb", "--out", tmp_path)
    assert code == 0, err
    echo = json.loads((tmp_path / "report.json").read_text())["workload"]
    assert tilesim.Workload.from_json(str(path)).check() == echo
