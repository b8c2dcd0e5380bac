#include "ir/tensor_values.hpp"

#include <stdexcept>
#include <string>

namespace tilesim {

void TensorValues::set_f32(TensorId id, std::vector<float> values) {
  TensorData d;
  d.dtype = DType::float32;
  d.f32 = std::move(values);
  data_[id] = std::move(d);
}

void TensorValues::set_i32(TensorId id, std::vector<std::int32_t> values) {
  TensorData d;
  d.dtype = DType::int32;
  d.i32 = std::move(values);
  data_[id] = std::move(d);
}

static const TensorData& find_or_throw(const std::map<TensorId, TensorData>& data, TensorId id, DType dtype) {
  auto it = data.find(id);
  if (it == data.end()) throw std::logic_error("TensorValues: no values for tensor " + std::to_string(id));
  if (it->second.dtype != dtype) throw std::logic_error("TensorValues: tensor " + std::to_string(id) + " is not " + to_string(dtype));
  return it->second;
}

const std::vector<float>& TensorValues::f32(TensorId id) const { return find_or_throw(data_, id, DType::float32).f32; }
const std::vector<std::int32_t>& TensorValues::i32(TensorId id) const { return find_or_throw(data_, id, DType::int32).i32; }
std::vector<float>& TensorValues::mutable_f32(TensorId id) {
  return const_cast<TensorData&>(find_or_throw(data_, id, DType::float32)).f32;
}

}  // namespace tilesim
