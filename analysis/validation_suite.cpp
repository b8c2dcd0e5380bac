#include "analysis/validation_suite.hpp"

#include <cstdlib>
#include <filesystem>
#include <random>

#include "common/error.hpp"

namespace tilesim::analysis {

std::string validation_data_dir() {
  const char* env = std::getenv("TILESIM_VALIDATION_DIR");
  if (env && *env) return env;
  return TILESIM_VALIDATION_DIR;
}

std::vector<std::string> suite_names() { return {"hydronet"}; }

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

namespace {

// SplitMix64's output function, as docs/workload-format.md specifies for seeding the op streams.
std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

std::vector<std::int32_t> point_indices(const Op& op, std::uint64_t seed) {
  // The index stream of op position 0 (stream 1), then Lemire's multiply-and-reject on the high 32 bits
  // of each draw; the workload generator (workloads/instantiate.cpp) does the same, and the validation
  // test checks the two agree.
  std::mt19937_64 engine(mix64(seed ^ mix64(1)));
  std::vector<std::int32_t> indices(static_cast<std::size_t>(op.num_indices()));
  const auto range = static_cast<std::uint32_t>(op.index_range());
  const std::uint32_t threshold = static_cast<std::uint32_t>(-range) % range;  // 2^32 mod range
  for (auto& index : indices) {
    std::uint64_t m;
    do {
      m = (engine() >> 32) * static_cast<std::uint64_t>(range);
    } while (static_cast<std::uint32_t>(m) < threshold);
    index = static_cast<std::int32_t>(m >> 32);
  }
  return indices;
}

std::string split_rule_text() {
  return "a point is in the calibration half when log2(num_inputs) + log2(num_features) + log2(num_outputs) "
         "(each size rounded to its nearest base-2 exponent) is even, else it is held out; on the hydronet "
         "grid this is a checkerboard of 297 + 297 points spanning every value of every size";
}

}  // namespace tilesim::analysis
