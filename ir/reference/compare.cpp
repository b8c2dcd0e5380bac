#include "ir/reference/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/reference/reference.hpp"

namespace tilesim::reference {

namespace {

// Element by element: `same(e, d)` says whether element e, |a - b| = d apart, agrees; counts the
// elements that do not ("N elements differ<how>; first difference ...", `why(e)` adding to the first's
// text). Sizes must match.
template <class Same, class Why>
Agreement count_mismatches(const Op& op, const std::vector<float>& a, const std::vector<float>& b, Same same, Why why,
                           const std::string& how) {
  Agreement r;
  const std::size_t cols = static_cast<std::size_t>(std::max<std::int64_t>(1, op.output_cols()));
  std::int64_t mismatches = 0;
  std::string first;
  for (std::size_t e = 0; e < a.size(); ++e) {
    const double d = std::fabs(static_cast<double>(a[e]) - static_cast<double>(b[e]));
    if (!std::isnan(d)) r.max_abs_difference = std::max(r.max_abs_difference, d);
    if (!same(e, d) && mismatches++ == 0) {
      first = "first difference at row " + std::to_string(e / cols) + ", column " + std::to_string(e % cols) + ": " +
              std::to_string(a[e]) + " vs " + std::to_string(b[e]) + why(e);
    }
  }
  r.equal = mismatches == 0;
  if (!r.equal) r.detail = std::to_string(mismatches) + " elements differ" + how + "; " + first;
  return r;
}

}  // namespace

Agreement compare_outputs(const Op& op, const Operands& operands, const std::vector<float>& a, const std::vector<float>& b,
                          const Accumulation& accumulation_a, const Accumulation& accumulation_b) {
  Agreement r;
  if (a.size() != b.size()) {
    r.detail = "output sizes differ: " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " elements";
    return r;
  }
  const bool bitwise = op.kind == OpKind::gather;
  // Each side is within its bound of the exact value, so they differ by at most the two bounds together.
  std::vector<double> bound;
  if (!bitwise) {
    bound = expect(op, operands, accumulation_a).bound;
    // Alike accumulations have the same bound: twice it, without evaluating the reference again.
    if (accumulation_a.of(op.dtype) == accumulation_b.of(op.dtype)) {
      for (double& b : bound) b *= 2;
    } else {
      const std::vector<double> bound_b = expect(op, operands, accumulation_b).bound;
      for (std::size_t e = 0; e < bound.size() && e < bound_b.size(); ++e) bound[e] += bound_b[e];
    }
    if (bound.size() != a.size()) {
      r.detail = "outputs have " + std::to_string(a.size()) + " elements, the op " + std::to_string(bound.size());
      return r;
    }
  }
  r = count_mismatches(
      op, a, b,
      [&](std::size_t e, double d) {
        return bitwise ? std::memcmp(&a[e], &b[e], sizeof(float)) == 0
                       : a[e] == b[e] || (std::isnan(a[e]) && std::isnan(b[e])) || d <= bound[e];
      },
      [](std::size_t) { return std::string(); }, "");
  if (r.equal)
    r.detail = bitwise ? "bitwise equal"
               : accumulation_a.of(op.dtype) == accumulation_b.of(op.dtype) ? "equal within twice the reference's bound"
                                   : "equal within the sum of each side's bound (one side accumulates in " + to_string(op.dtype) + ")";
  return r;
}

Agreement compare_outputs(const Op& op, const TensorValues& inputs, const std::vector<float>& a, const std::vector<float>& b,
                          const Accumulation& accumulation_a, const Accumulation& accumulation_b) {
  return compare_outputs(op, resolve_operands(op, inputs), a, b, accumulation_a, accumulation_b);
}

Agreement compare_outputs(const Op& op, const TensorValues& inputs, const TensorValues& produced, const std::vector<float>& a,
                          const std::vector<float>& b, const Accumulation& accumulation_a, const Accumulation& accumulation_b) {
  return compare_outputs(op, resolve_operands(op, inputs, produced), a, b, accumulation_a, accumulation_b);
}

Agreement compare_through_operands(const Op& op, const TensorValues& inputs, const TensorValues& produced_a,
                                   const TensorValues& produced_b, const std::vector<float>& a, const std::vector<float>& b,
                                   const Accumulation& accumulation_a, const Accumulation& accumulation_b) {
  Agreement r;
  const OpExpectation ea = expect(op, resolve_operands(op, inputs, produced_a), accumulation_a);
  const OpExpectation eb = expect(op, resolve_operands(op, inputs, produced_b), accumulation_b);
  if (a.size() != b.size() || ea.value.size() != a.size() || eb.value.size() != a.size()) {
    r.detail = "output sizes differ: " + std::to_string(a.size()) + " and " + std::to_string(b.size()) + " elements, the op " +
               std::to_string(ea.value.size());
    return r;
  }
  auto bound = [](const OpExpectation& e, std::size_t i) { return e.bound.empty() ? 0.0 : e.bound[i]; };
  r = count_mismatches(
      op, a, b,
      [&](std::size_t e, double d) {
        const double allowed = std::fabs(ea.value[e] - eb.value[e]) + bound(ea, e) + bound(eb, e);
        return a[e] == b[e] || (std::isnan(a[e]) && std::isnan(b[e])) || d <= allowed;
      },
      [&](std::size_t e) {
        return " (exact values from each side's operands " + std::to_string(ea.value[e]) + " and " + std::to_string(eb.value[e]) + ")";
      },
      " beyond what their operands explain");
  if (r.equal) r.detail = "apart by no more than the exact values from each backend's own operands, plus both bounds";
  return r;
}

}  // namespace tilesim::reference
