#include "kernels/reference/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace tilesim::kernels::reference {
namespace {

constexpr double kUnitRoundoffF32 = 0x1p-24;  // float32 round-to-nearest
constexpr double kUnitRoundoffF64 = 0x1p-53;
// Absolute slack, far below any float32 value a wrong sum could produce, so exact zeros compare cleanly.
constexpr double kTinyAbs = 1e-30;

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

std::string format_value(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
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

Verification verify(const Op& op, const TensorValues& inputs, const std::vector<float>& output) {
  Verification v;
  if (op.dtype != DType::float32) {
    v.detail = op.name + ": no reference for dtype " + to_string(op.dtype);
    return v;
  }
  const std::int64_t num_features = op.shape.num_features;
  const std::int64_t expected_size = op.shape.num_outputs * num_features;
  const std::string shape_text = std::to_string(op.shape.num_outputs) + " x " + std::to_string(num_features);
  if (static_cast<std::int64_t>(output.size()) != expected_size) {
    v.mismatches = expected_size;  // no element can be trusted
    v.detail = op.name + ": output has " + std::to_string(output.size()) + " elements, expected " +
               std::to_string(expected_size) + " (" + shape_text + ")";
    return v;
  }
  const std::vector<float>& input = inputs.f32(op.input);
  const std::vector<std::int32_t>& indices = inputs.i32(op.indices);
  if (static_cast<std::int64_t>(input.size()) != op.shape.num_inputs * num_features ||
      static_cast<std::int64_t>(indices.size()) != op.num_indices())
    throw std::invalid_argument("verify: " + op.name + ": input values do not match the op's shape");

  auto describe = [&](std::int64_t element) {
    return "row " + std::to_string(element / num_features) + ", column " + std::to_string(element % num_features);
  };

  if (op.kind == OpKind::gather) {
    const std::vector<float> expected = gather(input, num_features, indices);
    std::string first;
    for (std::size_t e = 0; e < expected.size(); ++e) {
      // A gather is a copy: compare bits, so -0, NaN payloads and every rounding must come through unchanged.
      if (std::memcmp(&expected[e], &output[e], sizeof(float)) == 0) continue;
      if (v.mismatches++ == 0)
        first = describe(static_cast<std::int64_t>(e)) + ": got " + format_value(output[e]) + ", expected " +
                format_value(expected[e]);
    }
    v.ok = v.mismatches == 0;
    v.detail = op.name + ": gather " + shape_text + " compared bitwise with the reference copy: " +
               (v.ok ? "all equal" : std::to_string(v.mismatches) + " elements differ; first at " + first);
    return v;
  }

  const ScatterAddReference ref = scatter_add(input, num_features, indices, op.shape.num_outputs);
  std::string first;
  double worst_fraction_of_bound = 0;
  for (std::size_t e = 0; e < output.size(); ++e) {
    const std::int32_t count = ref.count_per_row[e / static_cast<std::size_t>(num_features)];
    const double got = output[e];
    bool pass;
    double bound = 0;
    if (count == 0) {
      pass = got == 0.0;  // rows no index points at must be exactly zero
    } else {
      // Any order of n - 1 float32 additions errs by at most (n - 1) u sum|terms| (Jeannerod & Rump 2013);
      // the double reference itself errs by at most n 2^-53 sum|terms|.
      bound = (static_cast<double>(count - 1) * kUnitRoundoffF32 + static_cast<double>(count) * kUnitRoundoffF64) *
                  ref.abs_sum[e] + kTinyAbs;
      const double error = std::fabs(got - ref.sum[e]);
      pass = error <= bound;  // false for NaN
      if (pass) worst_fraction_of_bound = std::max(worst_fraction_of_bound, error / bound);
    }
    if (pass) continue;
    if (v.mismatches++ == 0)
      first = describe(static_cast<std::int64_t>(e)) + ": got " + format_value(got) + ", expected " + format_value(ref.sum[e]) +
              " within " + format_value(bound) + " (" + std::to_string(count) + " terms)";
  }
  v.ok = v.mismatches == 0;
  v.detail = op.name + ": scatter_add " + shape_text +
             " against a double-precision reference, each element within (n - 1) * 2^-24 * sum|terms|: " +
             (v.ok ? "all within; worst used " + format_value(100 * worst_fraction_of_bound) + "% of its bound"
                   : std::to_string(v.mismatches) + " elements outside; first at " + first);
  return v;
}

}  // namespace tilesim::kernels::reference
