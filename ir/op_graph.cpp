#include "ir/op_graph.hpp"

#include <algorithm>
#include <stdexcept>

namespace tilesim {

std::int64_t dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::float32: return 4;
    case DType::int32: return 4;
  }
  throw std::logic_error("dtype_bytes: unknown dtype");
}

std::string to_string(DType dtype) {
  switch (dtype) {
    case DType::float32: return "float32";
    case DType::int32: return "int32";
  }
  throw std::logic_error("to_string: unknown dtype");
}

std::optional<DType> dtype_from_string(const std::string& name) {
  if (name == "float32") return DType::float32;
  return std::nullopt;
}

std::string to_string(OpKind kind) {
  switch (kind) {
    case OpKind::gather: return "gather";
    case OpKind::scatter_add: return "scatter_add";
  }
  throw std::logic_error("to_string: unknown op kind");
}

std::int64_t TensorInfo::elements() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::int64_t Op::num_indices() const {
  return kind == OpKind::gather ? shape.num_outputs : shape.num_inputs;
}

std::int64_t Op::index_range() const {
  return kind == OpKind::gather ? shape.num_inputs : shape.num_outputs;
}

double Op::flops() const {
  if (kind == OpKind::scatter_add) return static_cast<double>(shape.num_inputs) * static_cast<double>(shape.num_features);
  return 0.0;
}

std::int64_t Op::min_bytes_read() const {
  const std::int64_t value_bytes = dtype_bytes(dtype);
  const std::int64_t index_bytes = num_indices() * dtype_bytes(DType::int32);
  const std::int64_t rows_read = kind == OpKind::gather ? std::min(shape.num_inputs, shape.num_outputs) : shape.num_inputs;
  return index_bytes + rows_read * shape.num_features * value_bytes;
}

std::int64_t Op::min_bytes_written() const {
  return shape.num_outputs * shape.num_features * dtype_bytes(dtype);
}

std::int64_t Op::min_bytes() const { return min_bytes_read() + min_bytes_written(); }

TensorId OpGraph::add_tensor(TensorInfo info) {
  tensors.push_back(std::move(info));
  return static_cast<TensorId>(tensors.size() - 1);
}

const Op& OpGraph::add_gather_scatter(const std::string& name, OpKind kind, DType dtype, OpShape shape) {
  Op op;
  op.name = name;
  op.kind = kind;
  op.dtype = dtype;
  op.shape = shape;
  const bool gather = kind == OpKind::gather;
  op.input = add_tensor({name + (gather ? ".table" : ".src"), {shape.num_inputs, shape.num_features}, dtype});
  op.indices = add_tensor({name + ".indices", {op.num_indices()}, DType::int32});
  op.output = add_tensor({name + ".out", {shape.num_outputs, shape.num_features}, dtype});
  ops.push_back(op);
  return ops.back();
}

}  // namespace tilesim
