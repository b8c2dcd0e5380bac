#pragma once
// The user's language: a workload JSON file (format in docs/workload-format.md), strictly validated,
// and turned into an op graph with generated input values. Knows nothing of machines.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/op_graph.hpp"
#include "ir/tensor_values.hpp"
#include "workloads/graphs/graph.hpp"
#include "workloads/layers/layers.hpp"
#include "workloads/loaders/loader_spec.hpp"
#include "workloads/parallel/parallel_spec.hpp"
#include "workloads/training/train_spec.hpp"
#include "workloads/training/training_step.hpp"

namespace tilesim::workloads {

enum class IndexDistribution {
  uniform,  // uniform over the index range, with repeats (torch.randint)
  sorted,   // uniform, then sorted ascending (edges sorted by destination)
  file,     // read from a text file, one integer per line
};
std::string to_string(IndexDistribution d);

struct IndexSpec {
  IndexDistribution distribution = IndexDistribution::uniform;
  std::string file;        // for IndexDistribution::file: the path as resolved (relative to the workload file)
  std::string given_file;  // the same path as written in the workload, echoed in the report
};

struct OpSpec {
  std::string name;     // unique within the workload; defaults to "<op>_<position>"
  OpKind kind = OpKind::gather;
  DType dtype = DType::float32;
  OpShape shape;
  IndexSpec indices;
  // "schnet_block": the hydronet SchNet InteractionBlock benchmark, lowered to one OpGroup of several
  // ops (workloads/layers/layers.hpp); `kind` and `indices` are then unused. Last, so that the brace
  // initialisation {name, kind, dtype, shape, indices} of a gather/scatter op keeps working.
  bool schnet_block = false;
  // "available_memory_proportion": the simulated IPU's budget for this op's temporaries, a share of a
  // tile's SRAM in (0, 1] (models/ipu/planning/temporary_budget.hpp); unset: the run's or the machine's.
  std::optional<double> available_memory_proportion;
};

// A GNN model on a graph: "graph", "num_features" and "model" of the workload file. Runs after `ops`.
struct ModelSpec {
  graphs::GraphSpec graph;
  std::int64_t num_features = 0;         // node feature width of the model's input
  // "dtype": the value dtype of every tensor and op of the model (features, weights, activations), as
  // torch's model.half() / .bfloat16() makes them; indices stay int32. A training step keeps its trained
  // parameters and optimizer state in float32 whatever this is (master weights, cast to this dtype for the
  // forward and backward passes; the echo's "train" says "master_weight_dtype") and computes its loss in
  // float32.
  DType dtype = DType::float32;
  std::vector<layers::LayerSpec> layers;
  // "train": a training step (forward, loss, backward, optimizer) instead of the forward pass alone.
  std::optional<training::TrainSpec> train;
  // "loader": mini-batches (sampled neighbourhoods, clusters, batches of small graphs), one step each,
  // instead of the whole graph in one step. With a "graphs" loader its dataset is the graph source and
  // `graph` stays empty.
  std::optional<loaders::LoaderSpec> loader;
};

struct Workload {
  std::string name;
  std::uint64_t seed = 0;
  std::vector<OpSpec> ops;
  std::optional<ModelSpec> model;
  std::string source_file;  // where it was read from ("" when built in code)
  // `tilesim run --available-memory-proportion P`: every op without its own proportion gets P (not a key
  // of the workload file; echoed under report.json's "options").
  std::optional<double> available_memory_proportion;
  // "parallel": the model's step spread over several devices (replicas, a pipeline, graph partitions);
  // `tilesim run` then reports its scaling (runs/scaling_run.hpp). Only beside a "model".
  std::optional<parallel::ParallelSpec> parallel;
};

// Parses and validates a workload document. Throws tilesim::InputError naming `file`, the JSON path,
// what was expected and what was found, for: unknown keys, wrong types, zero or negative sizes,
// unknown op kinds or dtypes, tensors too large for this host's memory, duplicate op names.
// Index files are checked here too (exist, one integer per line, count, range).
Workload parse_workload(const nlohmann::json& document, const std::string& file);
Workload load_workload(const std::string& path);

// The resolved workload (every default filled in), as echoed in report.json.
nlohmann::json to_json(const Workload& workload);

// The op graph and how to fill its inputs, without the values: cheap, so backends can plan the graph
// and reject what does not fit before any input is generated. The gather/scatter ops of `ops` keep their
// per-position streams (plain_ops: workload position -> graph op); everything else is described by
// `fills`. A model's graph is built (generated or loaded) here. Throws InputError when the model's
// tensors together exceed half of this host's memory.
struct Lowered {
  OpGraph graph;
  std::vector<layers::InputFill> fills;
  std::vector<std::pair<std::size_t, std::size_t>> plain_ops;
  training::TrainingLayout training;  // active() when the model carries a "train" section
};
// shapes_only: for runs whose backends read shapes alone (models): a model's tensors are not checked
// against this host's memory, since none is allocated (instantiate(..., true) makes no values).
Lowered lower(const Workload& workload, bool shapes_only = false);

// The op graph and its generated inputs. Deterministic in workload.seed: the same seed gives the same
// indices and values on every run. Values are standard-normal float32 (torch.randn); layer weights
// Glorot-uniform, biases fan-in uniform; edge indices come from the graph.
struct Instance {
  OpGraph graph;
  TensorValues values;
  training::TrainingLayout training;
};
Instance instantiate(const Workload& workload);
// The same from a workload lowered already (`lowered` = lower(workload)), so that a run which plans the
// graph before generating inputs lowers it once.
Instance instantiate(const Workload& workload, Lowered lowered, bool shapes_only = false);

// The uniform indices (with repeats) `instantiate` draws for the op at `position` of a workload with
// `seed`; validation and sweeps call it so that any of their points can be re-run with `tilesim run`.
std::vector<std::int32_t> generated_indices(std::uint64_t seed, std::size_t position, std::int64_t count, std::int64_t range);

// The op graph alone (no values): lower(workload).graph.
OpGraph build_graph(const Workload& workload);

// Reads an index file: one integer per line (blank lines and lines starting with '#' are skipped).
// Throws InputError naming the file and line for a malformed line or a value outside [0, range), and
// for a count other than `expected_count`.
std::vector<std::int32_t> read_index_file(const std::string& path, std::int64_t expected_count, std::int64_t range,
                                          const std::string& workload_file, const std::string& json_path);

}  // namespace tilesim::workloads
