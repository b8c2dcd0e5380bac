#pragma once
// Every point of a sweep of op points, in sweep order, without storing them: point i is decoded from i
// (backend block, then the mixed-radix digits op, dtype, num_inputs, num_features, num_outputs,
// repeat), and a point's index is found from its fields. A sweep of millions of points therefore costs
// a few axis lists before its first row, and --resume keeps one bit per point instead of its key.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "workloads/sweep_spec.hpp"

namespace tilesim::analysis {

class SweepPoints {
 public:
  SweepPoints() = default;
  explicit SweepPoints(const SweepSpec& spec);

  std::size_t size() const { return total_; }
  bool empty() const { return total_ == 0; }
  // Point i (0 <= i < size()): the order expand_sweep lists.
  SweepPoint operator[](std::size_t i) const;
  // Which backend point i belongs to, without decoding the rest.
  std::size_t backend_of(std::size_t i) const;
  // Points per backend, in the sweep's backend order.
  std::vector<std::size_t> per_backend() const;
  // The index of the point with these fields, or nothing when the sweep has no such point (another op,
  // a size outside the backend's subset, a repeat beyond the sweep's).
  std::optional<std::size_t> index_of(const std::string& op, const OpShape& shape, const std::string& dtype,
                                      std::size_t backend, int repeat) const;

 private:
  // One axis: its values in order, and each value's position.
  struct Axis {
    std::vector<std::int64_t> values;
    std::unordered_map<std::int64_t, std::size_t> position;
  };
  struct Block {
    std::size_t first = 0, size = 0;
    Axis num_inputs, num_features, num_outputs;
  };
  std::vector<std::string> ops_, dtypes_;
  std::size_t repeats_ = 1;
  std::vector<Block> blocks_;
  std::size_t total_ = 0;
};

}  // namespace tilesim::analysis
