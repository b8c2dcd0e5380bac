#pragma once
// What the torch-cpu test files share: small training workloads over every layer family the peer
// records, a step through the reference alone, a relative difference and one-call run options.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/reference/reference_ops.hpp"
#include "ir/tensor_values.hpp"
#include "results/backend.hpp"
#include "workloads/workload.hpp"

namespace tilesim_torch_test {

using namespace tilesim;
using nlohmann::json;

inline json training_workload(json graph, std::int64_t features, json model, json train) {
  return {{"name", "t"}, {"seed", 11}, {"graph", graph}, {"num_features", features}, {"model", model}, {"train", train}};
}

// A GCN on a node task with a training mask, a two-head GAT whose attention gradients go through the
// block mask (both Adam), a graph task on a molecules batch with a mean pool and SGD with momentum, and
// an RGCN over three relations (segment_matmul, Adam).
// Adam's first step moves each element by about lr * g / |g| however small g is, so a gradient element
// at rounding level would step the two backends apart; the weight decay keeps g + wd p away from zero.
inline std::vector<std::pair<std::string, workloads::Instance>> training_cases() {
  const json er = {{"generator", "erdos_renyi"}, {"num_nodes", 30}, {"num_edges", 110}};
  const json molecules = {{"generator", "molecules"}, {"num_graphs", 4}, {"min_nodes", 3}, {"max_nodes", 6}};
  std::vector<std::pair<std::string, json>> docs = {
      {"gcn",
       training_workload(er, 6,
                         json::array({{{"layer", "gcn"}, {"name", "c1"}, {"out", 8}, {"activation", "relu"}},
                                      {{"layer", "gcn"}, {"name", "c2"}, {"out", 4}}}),
                         {{"task", "node"}, {"loss", "cross_entropy"}, {"train_fraction", 0.5},
                          {"optimizer", {{"kind", "adam"}, {"lr", 0.01}, {"weight_decay", 5e-4}}}})},
      {"gat",
       training_workload(er, 5,
                         json::array({{{"layer", "gat"}, {"name", "a1"}, {"out", 3}, {"heads", 2}, {"activation", "relu"}},
                                      {{"layer", "gat"}, {"name", "a2"}, {"out", 3}}}),
                         {{"task", "node"}, {"loss", "cross_entropy"}, {"optimizer", {{"kind", "adam"}, {"lr", 0.02}, {"weight_decay", 1e-3}}}})},
      {"molecules",
       training_workload(molecules, 4,
                         json::array({{{"layer", "gin"}, {"name", "g1"}, {"out", 6}, {"activation", "relu"}},
                                      {{"layer", "sage"}, {"name", "s2"}, {"out", 3}}}),
                         {{"task", "graph"}, {"loss", "mse"}, {"pool", "mean"},
                          {"optimizer", {{"kind", "sgd"}, {"lr", 0.05}, {"momentum", 0.9}, {"weight_decay", 1e-3}}}})},
      // FiLM: two FiLM layers (mean, then max aggregation), their gradients through gathers by source
      // and by destination.
      {"film",
       training_workload(molecules, 4,
                         json::array({{{"layer", "film"}, {"name", "f1"}, {"out", 6}},
                                      {{"layer", "film"}, {"name", "f2"}, {"out", 3}, {"aggr", "max"}}}),
                         {{"task", "graph"}, {"loss", "cross_entropy"}, {"pool", "add"},
                          {"optimizer", {{"kind", "adam"}, {"lr", 0.01}}}})},
      // CGConv: sigmoid and softplus and their backward through autograd, a residual.
      {"cgconv",
       training_workload(molecules, 4,
                         json::array({{{"layer", "cgconv"}, {"name", "c1"}}, {{"layer", "linear"}, {"name", "readout"}, {"out", 3}}}),
                         {{"task", "graph"}, {"loss", "cross_entropy"}, {"pool", "mean"},
                          {"optimizer", {{"kind", "adam"}, {"lr", 0.01}, {"weight_decay", 1e-3}}}})},
      // RGCN: segment_matmul recorded per segment, its weight's and input's gradients from autograd checked
      // against the graph's transposed segment_matmuls.
      {"rgcn",
       training_workload({{"generator", "erdos_renyi"}, {"num_nodes", 30}, {"num_edges", 110}, {"num_relations", 3}}, 5,
                         json::array({{{"layer", "rgcn"}, {"name", "r1"}, {"out", 6}, {"activation", "relu"}},
                                      {{"layer", "rgcn"}, {"name", "r2"}, {"out", 4}}}),
                         {{"task", "node"}, {"loss", "cross_entropy"}, {"optimizer", {{"kind", "adam"}, {"lr", 0.01}, {"weight_decay", 5e-4}}}})}};
  std::vector<std::pair<std::string, workloads::Instance>> out;
  for (const auto& [name, doc] : docs) out.emplace_back(name, workloads::instantiate(workloads::parse_workload(doc, name + ".json")));
  return out;
}

// Every op of the step through the reference from the step's inputs alone (no backend involved).
inline TensorValues reference_step(const workloads::Instance& s) {
  TensorValues values = s.values;
  for (const Op& op : s.graph.ops) values.set_f32(op.output, reference::compute(op, values));
  return values;
}

// Largest |a - b| over the largest |b|: how far a tensor is from another, on the scale of its values.
inline double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double largest = 0, worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    largest = std::max(largest, static_cast<double>(std::fabs(b[i])));
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
  }
  return largest > 0 ? worst / largest : worst;
}

inline RunOptions once() {
  RunOptions o;
  o.warmup = 0;
  o.repeats = 1;
  return o;
}


}  // namespace tilesim_torch_test
