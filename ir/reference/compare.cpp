#include "ir/reference/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/reference/reference.hpp"

namespace tilesim::reference {

Agreement compare_outputs(const Op& op, const Operands& operands, const std::vector<float>& a, const std::vector<float>& b) {
  Agreement r;
  if (a.size() != b.size()) {
    r.detail = "output sizes differ: " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " elements";
    return r;
  }
  const bool bitwise = op.kind == OpKind::gather;
  // Each side is within its bound of the exact value, so they differ by at most twice that.
  std::vector<double> bound;
  if (!bitwise) {
    bound = expect(op, operands).bound;
    if (bound.size() != a.size()) {
      r.detail = "outputs have " + std::to_string(a.size()) + " elements, the op " + std::to_string(bound.size());
      return r;
    }
  }
  const std::size_t cols = static_cast<std::size_t>(std::max<std::int64_t>(1, op.output_cols()));
  std::int64_t mismatches = 0;
  std::string first;
  for (std::size_t e = 0; e < a.size(); ++e) {
    const double d = std::fabs(static_cast<double>(a[e]) - static_cast<double>(b[e]));
    if (!std::isnan(d)) r.max_abs_difference = std::max(r.max_abs_difference, d);
    const bool same = bitwise ? std::memcmp(&a[e], &b[e], sizeof(float)) == 0
                              : a[e] == b[e] || (std::isnan(a[e]) && std::isnan(b[e])) || d <= 2.0 * bound[e];
    if (!same && mismatches++ == 0) {
      first = "first difference at row " + std::to_string(e / cols) + ", column " + std::to_string(e % cols) + ": " +
              std::to_string(a[e]) + " vs " + std::to_string(b[e]);
    }
  }
  r.equal = mismatches == 0;
  r.detail = r.equal ? (bitwise ? "bitwise equal" : "equal within twice the reference's float32 bound")
                     : std::to_string(mismatches) + " elements differ; " + first;
  return r;
}

Agreement compare_outputs(const Op& op, const TensorValues& inputs, const std::vector<float>& a, const std::vector<float>& b) {
  return compare_outputs(op, resolve_operands(op, inputs), a, b);
}

Agreement compare_outputs(const Op& op, const TensorValues& inputs, const TensorValues& produced, const std::vector<float>& a,
                          const std::vector<float>& b) {
  return compare_outputs(op, resolve_operands(op, inputs, produced), a, b);
}

}  // namespace tilesim::reference
