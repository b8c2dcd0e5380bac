#include "ir/reference/reference.hpp"
#include "ir/reference/roundoff.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace tilesim::reference {
namespace {

std::int64_t rows_of(std::size_t values, std::int64_t num_features, const char* what) {
  if (num_features <= 0) throw std::invalid_argument(std::string(what) + ": num_features must be > 0");
  if (static_cast<std::int64_t>(values) % num_features != 0)
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(values) + " values is not a whole number of rows of " +
                                std::to_string(num_features));
  return static_cast<std::int64_t>(values) / num_features;
}

void check_index(std::int32_t index, std::int64_t position, std::int64_t range, const char* what) {
  if (index < 0 || index >= range)
    throw std::out_of_range(std::string(what) + ": indices[" + std::to_string(position) + "] = " + std::to_string(index) +
                            " is outside [0, " + std::to_string(range) + ")");
}

}  // namespace

std::vector<float> gather(const std::vector<float>& table, std::int64_t num_features, const std::vector<std::int32_t>& indices) {
  const std::int64_t num_rows = rows_of(table.size(), num_features, "reference::gather");
  std::vector<float> out(indices.size() * static_cast<std::size_t>(num_features));
  for (std::size_t i = 0; i < indices.size(); ++i) {
    check_index(indices[i], static_cast<std::int64_t>(i), num_rows, "reference::gather");
    for (std::int64_t f = 0; f < num_features; ++f)
      out[i * static_cast<std::size_t>(num_features) + static_cast<std::size_t>(f)] =
          table[static_cast<std::size_t>(indices[i]) * static_cast<std::size_t>(num_features) + static_cast<std::size_t>(f)];
  }
  return out;
}

ScatterAddReference scatter_add(const std::vector<float>& src, std::int64_t num_features,
                                const std::vector<std::int32_t>& indices, std::int64_t num_outputs) {
  const std::int64_t num_messages = rows_of(src.size(), num_features, "reference::scatter_add");
  if (num_messages != static_cast<std::int64_t>(indices.size()))
    throw std::invalid_argument("reference::scatter_add: " + std::to_string(num_messages) + " message rows but " +
                                std::to_string(indices.size()) + " indices");
  const auto out_size = static_cast<std::size_t>(num_outputs * num_features);
  ScatterAddReference ref;
  ref.sum.assign(out_size, 0.0);
  ref.abs_sum.assign(out_size, 0.0);
  ref.count_per_row.assign(static_cast<std::size_t>(num_outputs), 0);
  const auto features = static_cast<std::size_t>(num_features);
  for (std::size_t i = 0; i < indices.size(); ++i) {
    check_index(indices[i], static_cast<std::int64_t>(i), num_outputs, "reference::scatter_add");
    const auto row = static_cast<std::size_t>(indices[i]);
    ++ref.count_per_row[row];
    for (std::size_t f = 0; f < features; ++f) {
      const double term = src[i * features + f];
      ref.sum[row * features + f] += term;
      ref.abs_sum[row * features + f] += std::fabs(term);
    }
  }
  return ref;
}

std::string to_string(DotAccumulation accumulation) {
  return accumulation == DotAccumulation::float32 ? "float32" : "in_dtype";
}

DotAccumulation Accumulation::of(DType dtype) const {
  return dtype == DType::float16 ? float16 : dtype == DType::bfloat16 ? bfloat16 : DotAccumulation::float32;
}

Verification verify(const Op& op, const Operands& operands, const std::vector<float>& output, const Accumulation& accumulation) {
  Verification v;
  const std::int64_t rows = op.output_rows(), cols = op.output_cols();
  const std::int64_t expected_size = rows * cols;
  const std::string what = op.name + ": " + to_string(op.kind) +
                           (op.kind == OpKind::unary ? " " + to_string(op.unary) : op.kind == OpKind::binary ? " " + to_string(op.binary) : "") +
                           " " + std::to_string(rows) + " x " + std::to_string(cols);
  if (!is_value_dtype(op.dtype)) {
    v.detail = op.name + ": no reference for dtype " + to_string(op.dtype);
    return v;
  }
  if (static_cast<std::int64_t>(output.size()) != expected_size) {
    v.mismatches = expected_size;  // no element can be trusted
    v.detail = what + ": output has " + std::to_string(output.size()) + " elements, expected " + std::to_string(expected_size) +
               " (" + std::to_string(rows) + " x " + std::to_string(cols) + ")";
    return v;
  }
  const OpExpectation e = expect(op, operands, accumulation);
  auto describe = [&](std::size_t element) {
    return "row " + std::to_string(static_cast<std::int64_t>(element) / cols) + ", column " +
           std::to_string(static_cast<std::int64_t>(element) % cols);
  };

  std::string first;
  if (e.bitwise) {
    for (std::size_t el = 0; el < output.size(); ++el) {
      // A gather is a copy: compare bits, so -0, NaN payloads and every rounding must come through unchanged.
      if (std::memcmp(&e.copy[el], &output[el], sizeof(float)) == 0) continue;
      if (v.mismatches++ == 0)
        first = describe(el) + ": got " + format_value(output[el]) + ", expected " + format_value(e.copy[el]);
    }
    v.ok = v.mismatches == 0;
    v.detail = what + " " + e.rule + ": " + (v.ok ? "all equal" : std::to_string(v.mismatches) + " elements differ; first at " + first);
    return v;
  }

  double worst_fraction_of_bound = 0;
  for (std::size_t el = 0; el < output.size(); ++el) {
    const double got = output[el];
    const double value = e.value[el];
    // A half op's output must hold values of its dtype: a float32 result that was never stored in the
    // format fails, whatever its accuracy.
    if (!representable(op.dtype, output[el])) {
      if (v.mismatches++ == 0)
        first = describe(el) + ": got " + format_value(got) + ", which is not a " + to_string(op.dtype) + " value";
      continue;
    }
    // The reference rounded once equals a correct result always for exact kinds, and covers an exact
    // value beyond the dtype's range (both infinite); NaN passes only against a NaN reference.
    if (round_to(op.dtype, static_cast<float>(value)) == output[el] || (std::isnan(value) && std::isnan(got))) continue;
    if (e.correctly_rounded) {  // one correct value, which this is not
      if (v.mismatches++ == 0)
        first = describe(el) + ": got " + format_value(got) + ", expected exactly " + format_value(round_to(op.dtype, static_cast<float>(value)));
      continue;
    }
    const double error = std::fabs(got - value);
    if (error <= e.bound[el]) {  // false for NaN
      if (e.bound[el] > 0) worst_fraction_of_bound = std::max(worst_fraction_of_bound, error / e.bound[el]);
      continue;
    }
    if (v.mismatches++ == 0) {
      first = describe(el) + ": got " + format_value(got) + ", expected " + format_value(value) + " within " + format_value(e.bound[el]);
      if (!e.terms_per_row.empty())
        first += " (" + std::to_string(e.terms_per_row[el / static_cast<std::size_t>(cols)]) + " terms)";
    }
  }
  v.ok = v.mismatches == 0;
  v.detail = what + " against a double-precision reference, " + e.rule + ": " +
             (v.ok ? (e.correctly_rounded ? std::string("all exact") : "all within; worst used " + format_value(100 * worst_fraction_of_bound) + "% of its bound")
                   : std::to_string(v.mismatches) + " elements outside; first at " + first);
  return v;
}

Verification verify(const Op& op, const TensorValues& values, const std::vector<float>& output, const Accumulation& accumulation) {
  return verify(op, resolve_operands(op, values), output, accumulation);
}

}  // namespace tilesim::reference
