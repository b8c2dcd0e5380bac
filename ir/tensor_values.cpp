#include "ir/tensor_values.hpp"

#include <stdexcept>
#include <string>

namespace tilesim {

void TensorValues::set_f32(TensorId id, std::vector<float> values, DType dtype) {
  if (!is_value_dtype(dtype)) throw std::logic_error("TensorValues::set_f32: " + to_string(dtype) + " is not a value dtype");
  if (dtype != DType::float32)
    for (float& v : values) v = round_to(dtype, v);
  TensorData d;
  d.dtype = dtype;
  d.f32 = std::move(values);
  data_[id] = std::move(d);
}

void TensorValues::set_i32(TensorId id, std::vector<std::int32_t> values) {
  TensorData d;
  d.dtype = DType::int32;
  d.i32 = std::move(values);
  data_[id] = std::move(d);
}

// `values`: any value dtype (kept as float32s); else exactly int32.
static const TensorData& find_or_throw(const std::map<TensorId, TensorData>& data, TensorId id, bool values) {
  auto it = data.find(id);
  if (it == data.end()) throw std::logic_error("TensorValues: no values for tensor " + std::to_string(id));
  if (is_value_dtype(it->second.dtype) != values)
    throw std::logic_error("TensorValues: tensor " + std::to_string(id) + " is " + to_string(it->second.dtype) + ", not " +
                           (values ? "a value dtype" : "int32"));
  return it->second;
}

const std::vector<float>& TensorValues::f32(TensorId id) const { return find_or_throw(data_, id, true).f32; }
const std::vector<std::int32_t>& TensorValues::i32(TensorId id) const { return find_or_throw(data_, id, false).i32; }
std::vector<float>& TensorValues::mutable_f32(TensorId id) { return const_cast<TensorData&>(find_or_throw(data_, id, true)).f32; }
DType TensorValues::dtype(TensorId id) const {
  auto it = data_.find(id);
  if (it == data_.end()) throw std::logic_error("TensorValues: no values for tensor " + std::to_string(id));
  return it->second.dtype;
}

}  // namespace tilesim
