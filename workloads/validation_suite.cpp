#include "workloads/validation_suite.hpp"

#include <cstdlib>
#include <filesystem>

#include "common/error.hpp"
#include "workloads/workload.hpp"

namespace tilesim::analysis {

std::string validation_data_dir() {
  const char* env = std::getenv("TILESIM_VALIDATION_DIR");
  if (env && *env) return env;
  return TILESIM_VALIDATION_DIR;
}

std::vector<std::string> suite_names() { return {"hydronet", "layers", "models", "all"}; }

std::vector<SuiteMachine> hydronet_machines() {
  return {{"bow", "Graphcore Bow IPU", "Bow IPU", "ipu:bow",
           "tilesim IPU simulator (models/ipu): planner, tile codelet costs, exchange and sync, timing-only run",
           "device cycles per op in a 128-iteration on-device loop (poptorch.for_loop), / 1850 MHz; no host time"},
          // The data do not name the A100's variant; the 40 GB SXM is the best guess.
          {"a100", "NVIDIA A100", "A100", "gpu-model:a100-40gb:eager",
           "tilesim analytic GPU model (models/gpu): roofline plus overheads, eager mode (host floor per op kind + kernels)",
           "eager PyTorch 1.13 + torch_scatter call under torch.utils.benchmark.Timer.blocked_autorange; Python, dispatch "
           "and launch included"}};
}

std::vector<SuiteDataset> suite_datasets(const std::string& suite, const std::string& data_dir) {
  if (suite != "hydronet") throw InputError("", "--suite", "one of: hydronet", "\"" + suite + "\"");
  const std::filesystem::path root = std::filesystem::path(data_dir) / "hydronet-gnn";
  std::vector<SuiteDataset> sets;
  for (const char* op : {"gather", "scatter_add"}) sets.push_back({"bow", op, (root / "bow" / (std::string(op) + ".csv")).string()});
  for (const char* op : {"gather", "scatter_add", "scatter_max", "scatter_min"})
    sets.push_back({"a100", op, (root / "a100" / (std::string(op) + ".csv")).string()});
  return sets;
}

std::uint64_t point_index_seed(const OpShape& shape) {
  return static_cast<std::uint64_t>(shape.num_inputs) * 1000000000000ull +
         static_cast<std::uint64_t>(shape.num_features) * 1000000ull + static_cast<std::uint64_t>(shape.num_outputs);
}

std::vector<std::int32_t> point_indices(const Op& op, std::uint64_t seed) {
  // Op position 0 of a one-op workload with this seed: exactly what `tilesim run` draws.
  return workloads::generated_indices(seed, 0, op.num_indices(), op.index_range());
}

}  // namespace tilesim::analysis
