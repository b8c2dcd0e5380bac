#include "kernels/cpu/half_ops.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/cpu/degree_count.hpp"
#include "kernels/cpu/elementwise.hpp"
#include "kernels/cpu/gather_scatter.hpp"
#include "kernels/cpu/matmul.hpp"
#include "kernels/cpu/parallel.hpp"
#include "kernels/cpu/scatter_reduce.hpp"
#include "kernels/cpu/storage_convert.hpp"
#include "kernels/cpu/training_ops.hpp"

namespace tilesim::kernels::cpu {
namespace {

// Elementwise work runs in chunks small enough to stay in L1/L2: widen a chunk into float32 scratch,
// apply the float32 kernel to it (one thread: a chunk is below kParallelMinBytes), round it into the
// output. One pass over memory in 2-byte values, as a fused half kernel makes.
constexpr std::int64_t kHalfChunkElements = 4096;

// A float32 operand (values of T already) held as T, as a half model holds it.
template <class T>
std::vector<T> stored(const std::vector<float>* values) {
  if (values == nullptr) return {};
  std::vector<T> out(values->size());
  narrow(values->data(), static_cast<std::int64_t>(values->size()), out.data());
  return out;
}

}  // namespace

struct HalfOp::Impl {
  virtual ~Impl() = default;
  virtual void run() = 0;
  virtual void output(float* out) const = 0;
};

namespace {

template <class T>
class TypedHalfOp final : public HalfOp::Impl {
 public:
  TypedHalfOp(const Op& op, const Operands& o)
      : op_(op),
        input_(stored<T>(o.input)),
        weight_(stored<T>(o.weight)),
        bias_(stored<T>(o.bias)),
        indices_(o.indices),
        aux_(o.aux),
        out_(static_cast<std::size_t>(output_elements(op))) {}

  void run() override {
    const OpShape& s = op_.shape;
    switch (op_.kind) {
      case OpKind::gather: gather(s); return;
      case OpKind::scatter_add:
      case OpKind::scatter_mean:
      case OpKind::scatter_max: {
        const Reduce r = op_.kind == OpKind::scatter_add ? Reduce::sum : op_.kind == OpKind::scatter_mean ? Reduce::mean : Reduce::max;
        scatter_reduce<T>(r, input_.data(), s.num_inputs, s.num_features, indices_->data(), s.num_outputs, out_.data());
        return;
      }
      case OpKind::unary: unary(s); return;
      case OpKind::binary: binary(s); return;
      case OpKind::unary_grad: unary_grad(s); return;
      case OpKind::matmul:
        // The 16-bit product itself (AMX or AVX-512-BF16/FP16 where the CPU has them), float32 accumulation.
        if (op_.transpose_input || op_.transpose_weight)
          matmul_transposed<T>(input_.data(), op_.transpose_input, weight_.data(), op_.transpose_weight, s.num_inputs, s.num_features,
                               s.out_features, out_.data());
        else
          matmul<T>(input_.data(), weight_.data(), s.num_inputs, s.num_features, s.out_features,
                    op_.bias >= 0 ? bias_.data() : nullptr, out_.data());
        return;
      default: through_float32(s); return;
    }
  }

  void output(float* out) const override {
    for (std::size_t i = 0; i < out_.size(); ++i) out[i] = to_float(out_[i]);
  }

 private:
  void gather(const OpShape& s) {
    if constexpr (std::is_same_v<T, Float16>)
      gather_f16(input_.data(), s.num_inputs, s.num_features, indices_->data(), s.num_outputs, out_.data());
    else
      gather_bf16(input_.data(), s.num_inputs, s.num_features, indices_->data(), s.num_outputs, out_.data());
  }

  void unary(const OpShape& s) {
    const std::int64_t n = s.num_inputs * s.num_features;
    parallel::for_each_block(n, n * 4, [&](std::int64_t b, std::int64_t e) {
      float* x = parallel::scratch().get<float>(parallel::Scratch::rows, kHalfChunkElements);
      for (std::int64_t c = b; c < e; c += kHalfChunkElements) {
        const std::int64_t m = std::min(kHalfChunkElements, e - c);
        rows::load(input_.data() + c, m, x);
        unary_f32(op_.unary, op_.scalar, x, m, x);
        rows::store(x, m, out_.data() + c);
      }
    });
  }

  void unary_grad(const OpShape& s) {
    const std::int64_t n = s.num_inputs * s.num_features;
    parallel::for_each_block(n, n * 6, [&](std::int64_t b, std::int64_t e) {
      float* x = parallel::scratch().get<float>(parallel::Scratch::rows, kHalfChunkElements);
      float* g = parallel::scratch().get<float>(parallel::Scratch::other, kHalfChunkElements);
      for (std::int64_t c = b; c < e; c += kHalfChunkElements) {
        const std::int64_t m = std::min(kHalfChunkElements, e - c);
        rows::load(input_.data() + c, m, x);
        rows::load(weight_.data() + c, m, g);
        unary_grad_f32(op_.unary, op_.scalar, x, g, m, x);
        rows::store(x, m, out_.data() + c);
      }
    });
  }

  // Row blocks, so that `other` (one row, or one per row) is widened alongside the rows it meets.
  void binary(const OpShape& s) {
    const std::int64_t F = s.num_features, G = s.other_groups;
    const std::int64_t rows_per_chunk = std::max<std::int64_t>(1, kHalfChunkElements / std::max<std::int64_t>(F, 1));
    const std::int64_t chunks = (s.num_inputs + rows_per_chunk - 1) / rows_per_chunk;
    const int threads = parallel::threads_for(s.num_inputs * F * 6);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::int64_t r0 = c * rows_per_chunk, block_rows = std::min(rows_per_chunk, s.num_inputs - r0);
      float* x = parallel::scratch().get<float>(parallel::Scratch::rows, static_cast<std::size_t>(block_rows * F));
      float* other = parallel::scratch().get<float>(parallel::Scratch::other, static_cast<std::size_t>(block_rows * G));
      rows::load(input_.data() + r0 * F, block_rows * F, x);
      const std::int64_t other_rows = s.other_rows == 1 ? 1 : block_rows;
      rows::load(weight_.data() + (s.other_rows == 1 ? 0 : r0 * G), other_rows * G, other);
      binary_f32(op_.binary, x, block_rows, F, other, other_rows, G, x);
      rows::store(x, block_rows * F, out_.data() + r0 * F);
    }
  }

    // The remaining kinds on widened copies of their operands: the float32 kernel, then one rounding of
  // each result element.
  void through_float32(const OpShape& s) {
    widened(input_, input_f32_);
    widened(weight_, weight_f32_);
    widened(bias_, bias_f32_);
    out_f32_.resize(out_.size());
    const float* in = input_f32_.data();
    const float* w = weight_f32_.data();
    float* out = out_f32_.data();
    switch (op_.kind) {
      case OpKind::degree_count: degree_count_f32(indices_->data(), s.num_inputs, s.num_outputs, out); break;
      case OpKind::segment_matmul:
        if (op_.transpose_input)
          segment_matmul_transposed_input_f32(in, indices_->data(), s.num_segments, w, s.num_features, s.out_features, out);
        else if (op_.transpose_weight)
          segment_matmul_transposed_weight_f32(in, indices_->data(), s.num_segments, w, s.num_features, s.out_features, out);
        else
          segment_matmul_f32(in, indices_->data(), s.num_segments, w, s.num_features, s.out_features, out);
        break;
      case OpKind::sum_to: sum_to_f32(in, s.num_inputs, s.num_features, s.other_rows, s.other_groups, out); break;
      case OpKind::loss:
      case OpKind::loss_grad: {
        const std::int32_t* labels = op_.loss == LossFn::cross_entropy ? indices_->data() : nullptr;
        const float* targets = op_.loss == LossFn::mse ? w : nullptr;
        const float* row_weights = op_.loss_row_weights() >= 0 ? aux_->data() : nullptr;
        if (op_.kind == OpKind::loss) loss_f32(op_.loss, in, s.num_inputs, s.num_features, labels, targets, row_weights, out);
        else loss_grad_f32(op_.loss, in, s.num_inputs, s.num_features, labels, targets, row_weights, out);
        break;
      }
      case OpKind::optimizer_step:
        optimizer_step_f32(op_.optimizer, in, w, op_.optimizer_state() >= 0 ? bias_f32_.data() : nullptr, op_.step_number() >= 0 ? (*aux_)[0] : 1.0,
                           s.num_inputs * s.num_features, out);
        break;
      default: throw std::logic_error("cpu backend: op '" + op_.name + "': no half path for " + to_string(op_.kind));
    }
    narrow(out_f32_.data(), static_cast<std::int64_t>(out_f32_.size()), out_.data());
  }

  // An operand widened whole into float32 (its buffer kept across calls).
  static void widened(const std::vector<T>& in, std::vector<float>& out) {
    out.resize(in.size());
    widen(in.data(), static_cast<std::int64_t>(in.size()), out.data());
  }

  const Op& op_;
  std::vector<T> input_, weight_, bias_;
  const std::vector<std::int32_t>* indices_;
  const std::vector<float>* aux_;  // float32 whatever the op's dtype (loss row weights, Adam's step)
  std::vector<T> out_;
  std::vector<float> input_f32_, weight_f32_, bias_f32_, out_f32_;
};

}  // namespace

HalfOp::HalfOp(const Op& op, const Operands& operands) {
  switch (op.dtype) {
    case DType::float16: impl_ = std::make_unique<TypedHalfOp<Float16>>(op, operands); return;
    case DType::bfloat16: impl_ = std::make_unique<TypedHalfOp<BFloat16>>(op, operands); return;
    default: break;
  }
  throw std::invalid_argument("cpu backend: op '" + op.name + "': HalfOp takes float16 or bfloat16, not " + to_string(op.dtype));
}

HalfOp::~HalfOp() = default;
void HalfOp::run() { impl_->run(); }
void HalfOp::output(float* out) const { impl_->output(out); }

}  // namespace tilesim::kernels::cpu
