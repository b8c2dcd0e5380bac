#pragma once
// The JSON of one-op workloads, as the workload tests (tests/workloads/workload_test.cpp,
// workload_errors_test.cpp) write them: a workload of one op, and a gather or scatter_add op.
#include <cstdint>
#include <utility>

#include <nlohmann/json.hpp>

namespace tilesim_test::workload_json {

using nlohmann::json;

inline json one_op(json op) { return {{"name", "w"}, {"ops", json::array({std::move(op)})}}; }

inline json gather(std::int64_t inputs, std::int64_t features, std::int64_t outputs) {
  return {{"op", "gather"}, {"num_inputs", inputs}, {"num_features", features}, {"num_outputs", outputs}};
}

inline json scatter_add(std::int64_t inputs, std::int64_t features, std::int64_t outputs) {
  return {{"op", "scatter_add"}, {"num_inputs", inputs}, {"num_features", features}, {"num_outputs", outputs}};
}

}  // namespace tilesim_test::workload_json
