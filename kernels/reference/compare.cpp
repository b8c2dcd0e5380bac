#include "kernels/reference/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/reference/reference.hpp"

namespace tilesim::kernels::reference {

Agreement compare_outputs(const Op& op, const TensorValues& inputs, const std::vector<float>& a, const std::vector<float>& b) {
  Agreement r;
  if (a.size() != b.size()) {
    r.detail = "output sizes differ: " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " elements";
    return r;
  }
  const std::int64_t F = op.shape.num_features;
  std::vector<double> bound(a.size(), 0.0);
  if (op.kind == OpKind::scatter_add) {
    const auto ref = scatter_add(inputs.f32(op.input), F, inputs.i32(op.indices), op.shape.num_outputs);
    for (std::size_t e = 0; e < a.size(); ++e) {
      const auto n = ref.count_per_row[e / static_cast<std::size_t>(F)];
      // Each side is within (n - 1) 2^-24 sum|x| of the exact sum (plus the double reference's own
      // n 2^-53 sum|x|), so they differ by at most twice that.
      bound[e] = 2.0 * (std::max(0, n - 1) * std::ldexp(1.0, -24) + n * std::ldexp(1.0, -53)) * ref.abs_sum[e];
    }
  }
  std::int64_t mismatches = 0;
  std::string first;
  for (std::size_t e = 0; e < a.size(); ++e) {
    const double d = std::fabs(static_cast<double>(a[e]) - static_cast<double>(b[e]));
    r.max_abs_difference = std::max(r.max_abs_difference, d);
    const bool same = op.kind == OpKind::gather ? std::memcmp(&a[e], &b[e], sizeof(float)) == 0 : d <= bound[e];
    if (!same && mismatches++ == 0) {
      first = "first difference at row " + std::to_string(e / static_cast<std::size_t>(F)) + ", column " +
              std::to_string(e % static_cast<std::size_t>(F)) + ": " + std::to_string(a[e]) + " vs " + std::to_string(b[e]);
    }
  }
  r.equal = mismatches == 0;
  r.detail = r.equal ? (op.kind == OpKind::gather ? "bitwise equal" : "equal up to float32 summation order")
                     : std::to_string(mismatches) + " elements differ; " + first;
  return r;
}

}  // namespace tilesim::kernels::reference
