#include "workloads/sweep_points.hpp"

#include <algorithm>
#include <stdexcept>

namespace tilesim::analysis {

namespace {

std::optional<std::size_t> position_in(const std::vector<std::string>& values, const std::string& v) {
  const auto it = std::find(values.begin(), values.end(), v);
  if (it == values.end()) return std::nullopt;
  return static_cast<std::size_t>(it - values.begin());
}

}  // namespace

SweepPoints::SweepPoints(const SweepSpec& spec)
    : ops_(spec.ops), dtypes_(spec.dtypes), repeats_(static_cast<std::size_t>(std::max(spec.repeats, 1))) {
  auto axis = [](const std::vector<std::int64_t>& values) {
    Axis a;
    a.values = values;
    for (std::size_t i = 0; i < values.size(); ++i) a.position.emplace(values[i], i);
    return a;
  };
  for (const SweepBackend& b : spec.backends) {
    Block block;
    block.first = total_;
    block.num_inputs = axis(b.num_inputs);
    block.num_features = axis(b.num_features);
    block.num_outputs = axis(b.num_outputs);
    block.size = ops_.size() * dtypes_.size() * b.num_inputs.size() * b.num_features.size() * b.num_outputs.size() * repeats_;
    total_ += block.size;
    blocks_.push_back(std::move(block));
  }
}

std::size_t SweepPoints::backend_of(std::size_t i) const {
  if (i >= total_) throw std::out_of_range("sweep point " + std::to_string(i) + " of " + std::to_string(total_));
  // Blocks are few (one per backend) and in index order.
  std::size_t b = 0;
  while (i >= blocks_[b].first + blocks_[b].size) ++b;
  return b;
}

SweepPoint SweepPoints::operator[](std::size_t i) const {
  const std::size_t b = backend_of(i);
  const Block& block = blocks_[b];
  std::size_t local = i - block.first;
  // The digits, innermost first: repeat, num_outputs, num_features, num_inputs, dtype, op.
  auto digit = [&local](std::size_t radix) {
    const std::size_t d = local % radix;
    local /= radix;
    return d;
  };
  SweepPoint p;
  p.backend = b;
  p.repeat = static_cast<int>(digit(repeats_));
  p.shape.num_outputs = block.num_outputs.values[digit(block.num_outputs.values.size())];
  p.shape.num_features = block.num_features.values[digit(block.num_features.values.size())];
  p.shape.num_inputs = block.num_inputs.values[digit(block.num_inputs.values.size())];
  p.dtype = dtypes_[digit(dtypes_.size())];
  p.op = ops_[digit(ops_.size())];
  return p;
}

std::vector<std::size_t> SweepPoints::per_backend() const {
  std::vector<std::size_t> n;
  for (const Block& b : blocks_) n.push_back(b.size);
  return n;
}

std::optional<std::size_t> SweepPoints::index_of(const std::string& op, const OpShape& shape, const std::string& dtype,
                                                 std::size_t backend, int repeat) const {
  if (backend >= blocks_.size() || repeat < 0 || static_cast<std::size_t>(repeat) >= repeats_) return std::nullopt;
  const Block& block = blocks_[backend];
  const auto o = position_in(ops_, op), d = position_in(dtypes_, dtype);
  const auto in = block.num_inputs.position.find(shape.num_inputs);
  const auto f = block.num_features.position.find(shape.num_features);
  const auto out = block.num_outputs.position.find(shape.num_outputs);
  if (!o || !d || in == block.num_inputs.position.end() || f == block.num_features.position.end() ||
      out == block.num_outputs.position.end())
    return std::nullopt;
  std::size_t local = *o;
  local = local * dtypes_.size() + *d;
  local = local * block.num_inputs.values.size() + in->second;
  local = local * block.num_features.values.size() + f->second;
  local = local * block.num_outputs.values.size() + out->second;
  local = local * repeats_ + static_cast<std::size_t>(repeat);
  return block.first + local;
}

}  // namespace tilesim::analysis
