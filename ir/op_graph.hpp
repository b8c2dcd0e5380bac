#pragma once
// The op graph: tensors and the ops between them, shared by every backend and the report.
// FLOPs and minimum bytes are properties of an op, computed here once.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.hpp"

namespace tilesim {

using TensorId = std::int32_t;

struct TensorInfo {
  std::string name;
  std::vector<std::int64_t> shape;
  DType dtype = DType::float32;

  std::int64_t elements() const;
  std::int64_t bytes() const { return elements() * dtype_bytes(dtype); }
};

enum class OpKind { gather, scatter_add };
std::string to_string(OpKind kind);

// The three size fields of the gather/scatter benchmarks (hydronet-gnn naming):
//  gather:      table [num_inputs, num_features], indices [num_outputs] in [0, num_inputs),
//               out [num_outputs, num_features]           (PyG index_select)
//  scatter_add: src [num_inputs, num_features], indices [num_inputs] in [0, num_outputs),
//               out [num_outputs, num_features], zero where no index points  (PyG scatter, reduce='sum')
struct OpShape {
  std::int64_t num_inputs = 0;
  std::int64_t num_features = 0;
  std::int64_t num_outputs = 0;
};

struct Op {
  std::string name;
  OpKind kind = OpKind::gather;
  DType dtype = DType::float32;  // of the values (table/src and out)
  OpShape shape;
  TensorId input = -1;    // gather: the table; scatter_add: the messages (src)
  TensorId indices = -1;  // int32
  TensorId output = -1;

  std::int64_t num_indices() const;   // gather: num_outputs; scatter_add: num_inputs
  std::int64_t index_range() const;   // indices lie in [0, index_range)
  // Floating-point operations: 0 for a gather, one add per message element for scatter_add.
  double flops() const;
  // Minimum bytes any implementation must move between memory and the processor: indices read once,
  // every distinct input row read once (at most min(rows, lookups) for a gather), output written once.
  std::int64_t min_bytes() const;
  std::int64_t min_bytes_read() const;
  std::int64_t min_bytes_written() const;
};

struct OpGraph {
  std::vector<TensorInfo> tensors;
  std::vector<Op> ops;

  TensorId add_tensor(TensorInfo info);
  // Adds a gather or scatter_add op with fresh input, index and output tensors named after it.
  const Op& add_gather_scatter(const std::string& name, OpKind kind, DType dtype, OpShape shape);
  const TensorInfo& tensor(TensorId id) const { return tensors.at(static_cast<std::size_t>(id)); }
};

}  // namespace tilesim
