#pragma once
// Whether backends that ran the same op graph on the same inputs computed the same outputs, op by op:
// the check behind "outputs agree across backends" of `tilesim run`.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/op_graph.hpp"
#include "ir/reference/reference.hpp"
#include "ir/tensor_values.hpp"

namespace tilesim::runs {

struct OutputsOf {
  std::string backend;           // its name in the report
  const TensorValues* outputs;   // what it computed; nullptr for a backend that computes none (a model)
  reference::Accumulation accumulation = {};  // how it adds up half matmuls (Backend::accumulation())
};

// One entry per op and pair of backends that both computed its output ({"op", "backends", "check",
// "outputs_equal", "max_abs_difference", "detail"}); `all_agree` is cleared when a pair differs.
nlohmann::json op_agreements(const OpGraph& graph, const TensorValues& inputs, const std::vector<OutputsOf>& backends,
                             bool& all_agree);

}  // namespace tilesim::runs
