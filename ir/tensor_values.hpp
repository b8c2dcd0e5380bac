#pragma once
// Host copies of tensor contents: the generated inputs of a workload and the outputs a backend computed.
#include <cstdint>
#include <map>
#include <vector>

#include "ir/op_graph.hpp"

namespace tilesim {

struct TensorData {
  DType dtype = DType::float32;
  std::vector<float> f32;        // when dtype is a value dtype (a half dtype's values as exact float32s)
  std::vector<std::int32_t> i32; // when dtype == int32
};

class TensorValues {
 public:
  // Values of a value dtype: each rounded to `dtype` (a store into that format; float32 keeps them as
  // they are).
  void set_f32(TensorId id, std::vector<float> values, DType dtype = DType::float32);
  void set_i32(TensorId id, std::vector<std::int32_t> values);
  bool has(TensorId id) const { return data_.count(id) != 0; }
  // The values of a tensor of any value dtype (float32, float16, bfloat16), as float32.
  const std::vector<float>& f32(TensorId id) const;
  DType dtype(TensorId id) const;
  const std::vector<std::int32_t>& i32(TensorId id) const;
  std::vector<float>& mutable_f32(TensorId id);

 private:
  std::map<TensorId, TensorData> data_;
};

}  // namespace tilesim
