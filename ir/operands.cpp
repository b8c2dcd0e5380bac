#include "ir/operands.hpp"

#include <cmath>
#include <stdexcept>
#include <type_traits>

namespace tilesim {
namespace {

[[noreturn]] void bad(const Op& op, const std::string& who, const std::string& what) {
  throw std::invalid_argument((who.empty() ? "" : who + ": ") + "op '" + op.name + "' (" + to_string(op.kind) + "): " + what);
}

template <class T>
const std::vector<T>* find(const Op& op, TensorId id, const char* role, const TensorValues& inputs, const TensorValues* produced) {
  if (id < 0) return nullptr;
  const auto get = [&](const TensorValues& values) -> const std::vector<T>* {
    if constexpr (std::is_same_v<T, float>) return &values.f32(id);
    else return &values.i32(id);
  };
  if (produced != nullptr && produced->has(id)) return get(*produced);
  if (inputs.has(id)) return get(inputs);
  bad(op, "", std::string("no values for its ") + role + " tensor " + std::to_string(id) +
                  " (neither a given input nor the output of an earlier op)");
}

Operands resolve(const Op& op, const TensorValues& inputs, const TensorValues* produced) {
  Operands o;
  o.input = find<float>(op, op.input, "input", inputs, produced);
  const bool labels = op.kind == OpKind::loss || op.kind == OpKind::loss_grad;
  o.indices = find<std::int32_t>(op, op.indices, op.kind == OpKind::segment_matmul ? "offsets" : labels ? "labels" : "indices", inputs,
                                 produced);
  const char* weight_role = op.kind == OpKind::binary ? "other"
                            : labels                  ? "targets"
                            : op.kind == OpKind::unary_grad || op.kind == OpKind::optimizer_step ? "grad"
                                                                                                 : "weight";
  o.weight = find<float>(op, op.weight, weight_role, inputs, produced);
  o.bias = find<float>(op, op.bias, op.kind == OpKind::optimizer_step ? "state" : "bias", inputs, produced);
  o.aux = find<float>(op, op.aux, labels ? "row weights" : "step", inputs, produced);
  return o;
}

template <class T>
void expect_size(const Op& op, const std::string& who, const std::vector<T>* values, const char* role, std::int64_t expected,
                 const std::string& shape_text) {
  if (values == nullptr) bad(op, who, std::string("its ") + role + " operand is missing");
  if (static_cast<std::int64_t>(values->size()) != expected)
    bad(op, who, std::string(role) + " has " + std::to_string(values->size()) + " values, expected " + shape_text + " = " +
                     std::to_string(expected));
}

std::string times(std::int64_t a, std::int64_t b) { return std::to_string(a) + " x " + std::to_string(b); }

}  // namespace

Operands resolve_operands(const Op& op, const TensorValues& inputs, const TensorValues& produced) {
  return resolve(op, inputs, &produced);
}

Operands resolve_operands(const Op& op, const TensorValues& values) { return resolve(op, values, nullptr); }

std::int64_t output_elements(const Op& op) { return op.output_rows() * op.output_cols(); }

void check_operands(const Op& op, const Operands& o, const std::string& who) {
  const OpShape& s = op.shape;
  const std::int64_t m = s.num_inputs, k = s.num_features, n = s.out_features;
  switch (op.kind) {
    case OpKind::gather:
    case OpKind::scatter_add:
    case OpKind::scatter_mean:
    case OpKind::scatter_max:
      expect_size(op, who, o.input, op.kind == OpKind::gather ? "table" : "src", m * k, times(m, k));
      [[fallthrough]];
    case OpKind::degree_count: {
      expect_size(op, who, o.indices, "indices", op.num_indices(), "[" + std::to_string(op.num_indices()) + "]");
      const std::vector<std::int32_t>& idx = *o.indices;
      const std::int64_t range = op.index_range();
      for (std::size_t i = 0; i < idx.size(); ++i)
        if (idx[i] < 0 || idx[i] >= range)
          bad(op, who, "indices[" + std::to_string(i) + "] = " + std::to_string(idx[i]) + " is outside [0, " + std::to_string(range) + ")");
      break;
    }
    case OpKind::matmul:
      expect_size(op, who, o.input, "input", m * k, op.transpose_input ? times(k, m) : times(m, k));
      expect_size(op, who, o.weight, "weight", k * n, op.transpose_weight ? times(n, k) : times(k, n));
      if (op.bias >= 0) expect_size(op, who, o.bias, "bias", n, "[" + std::to_string(n) + "]");
      break;
    case OpKind::segment_matmul: {
      expect_size(op, who, o.input, "input", m * k, times(m, k));
      if (op.transpose_input) expect_size(op, who, o.weight, "grad", m * n, times(m, n));
      else
        expect_size(op, who, o.weight, "weight", s.num_segments * k * n,
                    std::to_string(s.num_segments) + " x " + (op.transpose_weight ? times(n, k) : times(k, n)));
      expect_size(op, who, o.indices, "offsets", s.num_segments + 1, "[num_segments + 1]");
      const std::vector<std::int32_t>& off = *o.indices;
      if (off.front() != 0) bad(op, who, "offsets[0] = " + std::to_string(off.front()) + ", expected 0");
      for (std::size_t i = 0; i + 1 < off.size(); ++i)
        if (off[i + 1] < off[i])
          bad(op, who, "offsets decrease at " + std::to_string(i + 1) + ": " + std::to_string(off[i]) + " then " + std::to_string(off[i + 1]));
      if (off.back() != m)
        bad(op, who, "offsets[" + std::to_string(s.num_segments) + "] = " + std::to_string(off.back()) + ", expected num_inputs = " +
                         std::to_string(m));
      break;
    }
    case OpKind::unary: expect_size(op, who, o.input, "input", m * k, times(m, k)); break;
    case OpKind::binary:
      expect_size(op, who, o.input, "input", m * k, times(m, k));
      if ((s.other_rows != 1 && s.other_rows != m) || s.other_groups <= 0 || k % s.other_groups != 0)
        bad(op, who, "other is " + times(s.other_rows, s.other_groups) + ": expected 1 or " + std::to_string(m) +
                         " rows and a number of groups dividing " + std::to_string(k));
      expect_size(op, who, o.weight, "other", s.other_rows * s.other_groups, times(s.other_rows, s.other_groups));
      break;
    case OpKind::unary_grad:
      expect_size(op, who, o.input, "input", m * k, times(m, k));
      expect_size(op, who, o.weight, "grad", m * k, times(m, k));
      break;
    case OpKind::sum_to:
    case OpKind::cast: expect_size(op, who, o.input, "input", m * k, times(m, k)); break;
    case OpKind::loss:
    case OpKind::loss_grad:
      expect_size(op, who, o.input, "predictions", m * k, times(m, k));
      if (op.loss == LossFn::mse) {
        expect_size(op, who, o.weight, "targets", m * k, times(m, k));
      } else {
        expect_size(op, who, o.indices, "labels", m, "[" + std::to_string(m) + "]");
        const std::vector<std::int32_t>& labels = *o.indices;
        for (std::size_t i = 0; i < labels.size(); ++i)
          if (labels[i] < 0 || labels[i] >= k)
            bad(op, who, "labels[" + std::to_string(i) + "] = " + std::to_string(labels[i]) + " is outside [0, " + std::to_string(k) + ")");
      }
      if (op.loss_row_weights() >= 0) {
        expect_size(op, who, o.loss_row_weights(), "row weights", m, "[" + std::to_string(m) + "]");
        // A weight is a row's share of the mean: negative or infinite ones have no such meaning (and
        // could cancel the weights' sum to 0 while rows still count).
        const std::vector<float>& w = *o.loss_row_weights();
        for (std::size_t i = 0; i < w.size(); ++i)
          if (!(w[i] >= 0) || std::isinf(w[i]))
            bad(op, who, "row weights[" + std::to_string(i) + "] = " + std::to_string(w[i]) + ", expected a finite weight >= 0");
      }
      break;
    case OpKind::optimizer_step: {
      expect_size(op, who, o.input, "parameter", m * k, times(m, k));
      expect_size(op, who, o.weight, "grad", m * k, times(m, k));
      const std::int64_t rows = op.optimizer.state_rows();
      if (rows > 0) expect_size(op, who, o.optimizer_state(), "state", rows * m * k, times(rows, m * k));
      if (op.optimizer.kind == OptimizerSpec::Kind::adam) {
        expect_size(op, who, o.step_number(), "step", 1, "[1, 1]");
        if (!((*o.step_number())[0] >= 1))
          bad(op, who, "step = " + std::to_string((*o.step_number())[0]) + ", expected a step number >= 1");
      }
      break;
    }
  }
}

}  // namespace tilesim
