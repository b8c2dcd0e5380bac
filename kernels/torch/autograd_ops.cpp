#include "kernels/torch/autograd_ops.hpp"

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace tilesim::kernels::torch_peer {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kLog2 = 0.69314718055994530942;

[[noreturn]] void refuse(const Op& op, const std::string& what) {
  throw std::invalid_argument("torch-cpu backend: op '" + op.name + "': " + what);
}

at::Tensor rows(const at::Tensor& t, std::int64_t r, std::int64_t c) { return t.reshape({r, c}); }

at::ScalarType scalar_type_of(const Op& op, DType dtype) {
  switch (dtype) {
    case DType::float32: return at::kFloat;
    case DType::float16: return at::kHalf;
    case DType::bfloat16: return at::kBFloat16;
    case DType::int32: break;
  }
  refuse(op, to_string(dtype) + " is not a value dtype");
}

// PyG's scatter(src, index, 0, dim_size=n, reduce=...): a fresh zeros output, the index broadcast over the
// features (a view), then scatter_add_ (sum) or scatter_reduce_ (mean, amax) without the zeros' values.
at::Tensor scatter(const Op& op, const at::Tensor& src, const at::Tensor& index) {
  const OpShape& s = op.shape;
  const at::Tensor x = rows(src, s.num_inputs, s.num_features);
  const at::Tensor wide = index.view({-1, 1}).expand({s.num_inputs, s.num_features});
  at::Tensor out = at::zeros({s.num_outputs, s.num_features}, x.options());
  if (op.kind == OpKind::scatter_add) return out.scatter_add_(0, wide, x);
  return out.scatter_reduce_(0, wide, x, op.kind == OpKind::scatter_mean ? "mean" : "amax", /*include_self=*/false);
}

at::Tensor unary(const Op& op, const at::Tensor& x) {
  switch (op.unary) {
    case UnaryFn::relu: return at::relu(x);
    case UnaryFn::leaky_relu: return at::leaky_relu(x, op.scalar);
    case UnaryFn::shifted_softplus: return at::softplus(x, 1, 20).sub(kLog2);  // PyG's ShiftedSoftplus
    case UnaryFn::exp: return at::exp(x);
    case UnaryFn::softplus: return at::softplus(x, 1, 20);  // CGConv's F.softplus
    case UnaryFn::sigmoid: return at::sigmoid(x);            // CGConv's .sigmoid()
    case UnaryFn::sqrt: return at::sqrt(x);                  // PNA's std
    case UnaryFn::log: return at::log(x);                    // PNA's degree scalers
    case UnaryFn::clamp_min: return at::clamp_min(x, op.scalar);
    case UnaryFn::scale: return x.mul(static_cast<double>(op.scalar));  // GIN's (1 + eps) * x
    // GCN's deg.pow(-0.5) with the infinities of zero degrees masked to 0.
    case UnaryFn::rsqrt_or_zero: return x.pow(-0.5).masked_fill(x <= 0, 0);
    case UnaryFn::reciprocal_or_zero: return x.reciprocal().masked_fill(x == 0, 0);
    case UnaryFn::cosine_cutoff:  // SchNet's 0.5 (cos(pi d / c) + 1), zero from the cutoff on
      return x.mul(kPi / static_cast<double>(op.scalar)).cos().add(1.0).mul(0.5).masked_fill(x >= op.scalar, 0);
  }
  refuse(op, "unknown unary function");
}

// `other` [other_rows, groups] broadcast against x [rows, groups, features / groups].
at::Tensor binary(const Op& op, const at::Tensor& input, const at::Tensor& other) {
  const OpShape& s = op.shape;
  const std::int64_t per_group = s.num_features / s.other_groups;
  const at::Tensor x = input.reshape({s.num_inputs, s.other_groups, per_group});
  const at::Tensor o = other.reshape({s.other_rows, s.other_groups, 1});
  at::Tensor out;
  switch (op.binary) {
    case BinaryFn::add: out = at::add(x, o); break;
    case BinaryFn::subtract: out = at::sub(x, o); break;
    case BinaryFn::multiply: out = at::mul(x, o); break;
    case BinaryFn::divide: out = at::div(x, o); break;
    case BinaryFn::equal: out = at::eq(x, o).to(x.scalar_type()); break;
  }
  return out.reshape({s.num_inputs, s.num_features});
}

}  // namespace

at::Tensor record_op(const Op& op, const OperandTensors& given) {
  OperandTensors o = given;
  if (op.detach)
    for (at::Tensor* t : {&o.input, &o.weight, &o.bias})
      if (t->defined()) *t = t->detach();
  const OpShape& s = op.shape;
  switch (op.kind) {
    case OpKind::gather: return rows(o.input, s.num_inputs, s.num_features).index_select(0, o.indices);
    case OpKind::scatter_add:
    case OpKind::scatter_mean:
    case OpKind::scatter_max: return scatter(op, o.input, o.indices);
    case OpKind::degree_count: {  // PyG's utils.degree: zeros(N, dtype=x.dtype).scatter_add_(0, index, ones(E))
      at::Tensor out = at::zeros({s.num_outputs}, at::TensorOptions().dtype(scalar_type_of(op, op.dtype)));
      return out.scatter_add_(0, o.indices, at::ones({s.num_inputs}, out.options())).view({s.num_outputs, 1});
    }
    case OpKind::matmul: {
      if (op.transpose_input || op.transpose_weight) refuse(op, "a transposed matmul is a backward op, which autograd computes");
      const at::Tensor x = rows(o.input, s.num_inputs, s.num_features);
      const at::Tensor w = rows(o.weight, s.num_features, s.out_features);
      // torch.nn.Linear: addmm with the bias, mm without.
      return op.bias >= 0 ? at::addmm(o.bias.reshape({s.out_features}), x, w) : at::mm(x, w);
    }
    case OpKind::segment_matmul: {
      if (op.transpose_input || op.transpose_weight) refuse(op, "a transposed segment_matmul is a backward op, which autograd computes");
      // pyg_lib's segment_matmul: each segment's rows times its weight, the products concatenated. Its
      // autograd function differentiates to segment_matmul(g, ptr, W^T) and x_s^T @ g_s per segment; the
      // mm and narrow/cat backwards here compute the same products (an empty segment's weight gradient
      // the zeros of a [K, 0] @ [0, N] product). The offsets stay on the host, as pyg_lib reads ptr.
      const at::Tensor x = rows(o.input, s.num_inputs, s.num_features);
      const at::Tensor w = o.weight.reshape({s.num_segments, s.num_features, s.out_features});
      const at::Tensor ptr = o.indices.to(at::kLong).contiguous();
      const std::int64_t* off = ptr.data_ptr<std::int64_t>();
      std::vector<at::Tensor> parts;
      parts.reserve(static_cast<std::size_t>(s.num_segments));
      for (std::int64_t seg = 0; seg < s.num_segments; ++seg)
        parts.push_back(at::mm(x.narrow(0, off[seg], off[seg + 1] - off[seg]), w.select(0, seg)));
      return at::cat(parts, 0);
    }
    case OpKind::unary: return unary(op, o.input);
    case OpKind::binary: return binary(op, o.input, o.weight);
    case OpKind::cast: {
      // tensor.to(dtype) (a master weight's cast under autocast; its backward is ToCopyBackward's
      // conversion back); a scale multiplies in float32 first, exact for a power of two.
      const at::ScalarType to = scalar_type_of(op, op.dtype);
      const double scale = op.cast_scale();
      return scale == 1.0 ? o.input.to(to) : o.input.to(at::kFloat).mul(scale).to(to);
    }
    default: break;
  }
  refuse(op, to_string(op.kind) + " is not a forward op the peer records through autograd");
}

at::Tensor record_loss(const Op& op, const OperandTensors& o) {
  if (op.kind != OpKind::loss) refuse(op, "not a loss op");
  const at::Tensor x = rows(o.input, op.shape.num_inputs, op.shape.num_features);
  if (o.aux.defined()) {
    // (F.cross_entropy(x, y, reduction='none') * w).sum() / w.sum(), with mse's per-row means of
    // F.mse_loss(reduction='none') in place of the row losses. The weights' sum is clamped to the
    // smallest float above 0, which leaves any positive sum as it is and turns an all-zero one's 0 / 0
    // into 0 / tiny = 0: loss and gradient 0, not NaN.
    const at::Tensor w = o.aux.reshape({op.shape.num_inputs});
    const at::Tensor per_row =
        op.loss == LossFn::cross_entropy
            ? at::cross_entropy_loss(x, o.indices, {}, at::Reduction::None, /*ignore_index=*/-100, /*label_smoothing=*/0.0)
            : at::mse_loss(x, rows(o.weight, op.shape.num_inputs, op.shape.num_features), at::Reduction::None).mean(1);
    return per_row.mul(w).sum().div(w.sum().clamp_min(std::numeric_limits<float>::denorm_min()));
  }
  return op.loss == LossFn::cross_entropy
             ? at::cross_entropy_loss(x, o.indices, {}, at::Reduction::Mean, /*ignore_index=*/-100, /*label_smoothing=*/0.0)
             : at::mse_loss(x, rows(o.weight, op.shape.num_inputs, op.shape.num_features), at::Reduction::Mean);
}

}  // namespace tilesim::kernels::torch_peer
