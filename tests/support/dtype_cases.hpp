#pragma once
// A float32 test graph turned into the same graph in a half dtype: every value tensor and op takes the
// dtype (a loss's row weights and Adam's step number stay float32, as the op graph requires) and every
// given value is rounded into it, as a workload with "dtype" would make them.
#include <set>

#include "ir/op_graph.hpp"
#include "ir/tensor_values.hpp"

namespace tilesim_test {

inline void convert_to_dtype(tilesim::OpGraph& graph, tilesim::TensorValues& values, tilesim::DType dtype) {
  using namespace tilesim;
  std::set<TensorId> float32_only;
  for (const Op& op : graph.ops)
    if ((op.kind == OpKind::loss || op.kind == OpKind::loss_grad || op.kind == OpKind::optimizer_step) && op.aux >= 0)
      float32_only.insert(op.aux);
  for (std::size_t t = 0; t < graph.tensors.size(); ++t) {
    const auto id = static_cast<TensorId>(t);
    TensorInfo& info = graph.tensors[t];
    if (!is_value_dtype(info.dtype) || float32_only.count(id) != 0) continue;
    info.dtype = dtype;
    if (values.has(id)) values.set_f32(id, values.f32(id), dtype);
  }
  for (Op& op : graph.ops) {
    op.dtype = dtype;
    if (op.kind == OpKind::cast) op.input_dtype = dtype;  // its input tensor's, converted above
  }
}

}  // namespace tilesim_test
