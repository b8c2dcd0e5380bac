#pragma once
// The validation suites: which measured data sets exist, for which machine and op. The data ship in
// the source tree under validation/ (validation/hydronet-gnn/README.md says where they came from).
#include <cstdint>
#include <string>
#include <vector>

#include "ir/op_graph.hpp"

namespace tilesim::analysis {

struct SuiteDataset {
  std::string machine;  // "bow" or "a100": the machine that was measured
  std::string op;       // "gather", "scatter_add", "scatter_max", "scatter_min"
  std::string path;     // the CSV file
};

// A measured machine of the hydronet suite and the backend whose predictions are held against it.
struct SuiteMachine {
  std::string machine;      // "bow": the data's folder and the reports' key
  std::string label;        // "Graphcore Bow IPU", as tables name it
  std::string short_label;  // "Bow IPU", as figure titles name it
  std::string backend;      // "ipu:bow": the backend that predicts its points (its family's single_op_predictor)
  std::string model;        // which model that is, in words
  std::string measurement;  // how the reference times were taken
};

// The machines of the hydronet suite, in report order (Bow first, then the A100).
std::vector<SuiteMachine> hydronet_machines();

// The directory holding the shipped validation data: $TILESIM_VALIDATION_DIR when set, else the
// source tree's validation/ (compiled in, so the tool works from its build tree).
std::string validation_data_dir();

// Names of the known suites: "hydronet" (measured single ops), "layers" and "models" (published
// figures, workloads/published_suite.hpp) and "all".
std::vector<std::string> suite_names();

// The data sets of the hydronet suite, in report order (Bow first, then A100; ops in the order above). Throws
// tilesim::InputError for an unknown suite name, listing the known ones.
std::vector<SuiteDataset> suite_datasets(const std::string& suite, const std::string& data_dir = validation_data_dir());

// The seed of a point's indices, readable as its sizes: num_inputs * 10^12 + num_features * 10^6 +
// num_outputs (16, 16, 32 -> 16000016000032), so each point of the grid has its own fixed indices.
std::uint64_t point_index_seed(const OpShape& shape);

// The op's indices, uniform over its index range with repeats (torch.randint), drawn exactly as
// `tilesim run` draws them for a one-op workload with this seed (docs/workload-format.md, "Generated
// values"): a point of the suite can be re-run alone with `tilesim run`.
std::vector<std::int32_t> point_indices(const Op& op, std::uint64_t seed);

}  // namespace tilesim::analysis
