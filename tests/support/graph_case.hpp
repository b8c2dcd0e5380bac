#pragma once
// A small op graph built by hand in a test: tensors with their values, and ops added over them.
#include <string>
#include <utility>
#include <vector>

#include "ir/op_graph.hpp"
#include "ir/tensor_values.hpp"

namespace tilesim_test {

struct GraphCase {
  tilesim::OpGraph graph;
  tilesim::TensorValues values;
  tilesim::TensorId f32(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> v) {
    const tilesim::TensorId id = graph.add_tensor({name, std::move(shape), tilesim::DType::float32});
    values.set_f32(id, std::move(v));
    return id;
  }
  tilesim::TensorId i32(const std::string& name, std::vector<std::int32_t> v) {
    const tilesim::TensorId id = graph.add_tensor({name, {static_cast<std::int64_t>(v.size())}, tilesim::DType::int32});
    values.set_i32(id, std::move(v));
    return id;
  }
  // Adds `op` (its output tensor made by the graph) and returns it as added.
  const tilesim::Op& add(tilesim::Op op) {
    graph.add_op(std::move(op));
    return graph.ops.back();
  }
};

// An op of `kind` named `name` over [rows, cols] values (num_inputs, num_features); its operands are
// for the test to set.
inline tilesim::Op op_of_kind(const std::string& name, tilesim::OpKind kind, std::int64_t rows, std::int64_t cols) {
  tilesim::Op op;
  op.name = name;
  op.kind = kind;
  op.shape.num_inputs = rows;
  op.shape.num_features = cols;
  return op;
}

}  // namespace tilesim_test
