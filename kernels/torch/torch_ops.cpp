// The one translation unit that includes ATen: every other file reaches libtorch through torch_ops.hpp.
#include "kernels/torch/torch_ops.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <torch/version.h>

#include <functional>
#include <stdexcept>
#include <vector>
#include <utility>

#include "kernels/cpu/onednn_matmul.hpp"
#include "kernels/cpu/openblas_coretype.hpp"

namespace tilesim::kernels::torch_peer {

struct PeerCall::Impl {
  std::function<void()> call;  // captures the wrapping tensors by value, so they live as long as the call
  // Half calls: each half output tensor and the caller's float buffer it is widened into by finish().
  std::vector<std::pair<at::Tensor, at::Tensor>> copy_back;
  DType dtype = DType::float32;  // the value dtype the call was made in
};

namespace {

// The value dtype the factories make their tensors in (ValueDTypeScope), and the outputs of the call
// being made that finish() must widen.
thread_local DType value_dtype = DType::float32;
thread_local std::vector<std::pair<at::Tensor, at::Tensor>> pending_copy_back;

at::ScalarType scalar_type(DType dtype) {
  switch (dtype) {
    case DType::float32: return at::kFloat;
    case DType::float16: return at::kHalf;
    case DType::bfloat16: return at::kBFloat16;
    case DType::int32: break;
  }
  throw std::invalid_argument("torch-cpu: " + to_string(dtype) + " is not a value dtype");
}

}  // namespace

ValueDTypeScope::ValueDTypeScope(DType dtype) : previous_(value_dtype) {
  scalar_type(dtype);  // refuses a non-value dtype
  value_dtype = dtype;
  pending_copy_back.clear();  // nothing left over from a factory that threw
}
ValueDTypeScope::~ValueDTypeScope() {
  value_dtype = previous_;
  pending_copy_back.clear();
}

void PeerCall::finish() const {
  for (auto& [half, caller] : impl_->copy_back) caller.copy_(half);
}

PeerCall::PeerCall(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PeerCall::PeerCall(PeerCall&&) noexcept = default;
PeerCall& PeerCall::operator=(PeerCall&&) noexcept = default;
PeerCall::~PeerCall() = default;

void PeerCall::operator()() const {
  // Inference mode skips autograd's bookkeeping, as torch.inference_mode() would: the peer at its fastest.
  c10::InferenceMode guard;
  if (impl_->dtype == DType::float32) {
    impl_->call();
    return;
  }
  try {
    impl_->call();
  } catch (const c10::Error& e) {
    // ATen's CPU kernels do not all take half types (libtorch 1.13: no float16 mm or cos): what a user of
    // this libtorch would meet, said as the request it is, not as a crash.
    const std::string what = e.what_without_backtrace();
    throw UnsupportedByPeer("libtorch " + version() + " has no " + to_string(impl_->dtype) + " CPU kernel for this op (ATen: " +
                            what.substr(0, what.find('\n')) + ")");
  }
}

namespace {

// A tensor over caller-owned memory (float32), or its copy in the scope's half dtype. from_blob takes a
// non-const pointer; the inputs are only read.
at::Tensor wrap_input(const float* data, at::IntArrayRef shape) {
  at::Tensor t = at::from_blob(const_cast<float*>(data), shape, at::TensorOptions().dtype(at::kFloat));
  return value_dtype == DType::float32 ? t : t.to(scalar_type(value_dtype));
}
// The output: the caller's buffer itself (float32), or a half tensor widened into it by finish().
at::Tensor wrap_output(float* data, at::IntArrayRef shape) {
  at::Tensor t = at::from_blob(data, shape, at::TensorOptions().dtype(at::kFloat));
  if (value_dtype == DType::float32) return t;
  at::Tensor half = at::empty(shape, at::TensorOptions().dtype(scalar_type(value_dtype)));
  pending_copy_back.emplace_back(half, t);
  return half;
}
at::Tensor wrap(const float* data, std::int64_t rows, std::int64_t cols) { return wrap_input(data, {rows, cols}); }
at::Tensor wrap(float* data, std::int64_t rows, std::int64_t cols) { return wrap_output(data, {rows, cols}); }
at::Tensor wrap_vector(const float* data, std::int64_t count) { return wrap_input(data, {count}); }
at::Tensor wrap_indices(const std::int32_t* data, std::int64_t count) {
  return at::from_blob(const_cast<std::int32_t*>(data), {count}, at::TensorOptions().dtype(at::kInt));
}
// An owned int64 copy: scatter_add_ and scatter_reduce_ accept int64 indices only.
at::Tensor indices_int64(const std::int32_t* data, std::int64_t count) { return wrap_indices(data, count).to(at::kLong); }

PeerCall make(std::function<void()> call) {
  auto impl = std::make_unique<PeerCall::Impl>();
  impl->call = std::move(call);
  impl->copy_back = std::move(pending_copy_back);
  impl->dtype = value_dtype;
  pending_copy_back.clear();
  return PeerCall(std::move(impl));
}

const char* reduce_name(cpu::Reduce reduce) {
  switch (reduce) {
    case cpu::Reduce::sum: return "sum";
    case cpu::Reduce::mean: return "mean";
    case cpu::Reduce::max: return "amax";
  }
  return "sum";
}

// libtorch chooses oneDNN for a bfloat16 matmul by the CPU's own features (AVX-512 BW, VL and DQ), but
// oneDNN (the same system library) also obeys ONEDNN_MAX_CPU_ISA / DNNL_MAX_CPU_ISA. Where the two
// disagree (an AVX-512 host capped below it, as make test-isa-capped does), every such matmul fails
// ("could not create a primitive descriptor iterator"), where a host without AVX-512 takes ATen's own
// kernel. There the peer turns libtorch's use of oneDNN off, so that it runs as on a host of the capped
// instruction set.
bool follow_onednn_isa_cap() {
  const cpu::CpuFeatures f = cpu::host_cpu_features();
  const bool libtorch_picks_onednn = f.avx512bw && f.avx512vl && f.avx512dq;
  const bool disagree = libtorch_picks_onednn && !cpu::onednn_allows_avx512();
  if (disagree) at::globalContext().setUserEnabledMkldnn(false);
  return disagree;
}

// Before any peer call: libtorch's shared library is initialised before this one's statics.
[[maybe_unused]] const bool onednn_cap_followed = follow_onednn_isa_cap();

}  // namespace

std::string version() { return TORCH_VERSION; }
void set_num_threads(int threads) { at::set_num_threads(threads); }
int num_threads() { return at::get_num_threads(); }

PeerCall index_select(const float* table, std::int64_t num_rows, std::int64_t num_features, const std::int32_t* indices,
                      std::int64_t num_lookups, float* out) {
  at::Tensor t = wrap(table, num_rows, num_features);
  at::Tensor i = wrap_indices(indices, num_lookups);
  at::Tensor o = wrap(out, num_lookups, num_features);
  return make([t, i, o]() mutable { at::index_select_out(o, t, 0, i); });
}

PeerCall index_add(const float* src, std::int64_t num_messages, std::int64_t num_features, const std::int32_t* indices,
                   std::int64_t num_outputs, float* out) {
  at::Tensor s = wrap(src, num_messages, num_features);
  at::Tensor i = wrap_indices(indices, num_messages);
  at::Tensor o = wrap(out, num_outputs, num_features);
  return make([s, i, o]() mutable { o.zero_().index_add_(0, i, s); });
}

PeerCall scatter(cpu::Reduce reduce, const float* src, std::int64_t num_messages, std::int64_t num_features,
                 const std::int32_t* indices, std::int64_t num_outputs, float* out) {
  at::Tensor s = wrap(src, num_messages, num_features);
  at::Tensor i = indices_int64(indices, num_messages);
  at::Tensor o = wrap(out, num_outputs, num_features);
  if (reduce == cpu::Reduce::sum) {
    // PyG broadcasts the index inside scatter() (a view, no copy), so the expand is part of each call.
    return make([s, i, o, num_messages, num_features]() mutable {
      o.zero_().scatter_add_(0, i.view({-1, 1}).expand({num_messages, num_features}), s);
    });
  }
  const char* name = reduce_name(reduce);
  return make([s, i, o, num_messages, num_features, name]() mutable {
    o.zero_().scatter_reduce_(0, i.view({-1, 1}).expand({num_messages, num_features}), s, name, /*include_self=*/false);
  });
}

PeerCall segment_reduce(cpu::Reduce reduce, const float* src, std::int64_t num_messages, std::int64_t num_features,
                        const std::int64_t* offsets, std::int64_t num_segments, float* out) {
  at::Tensor s = wrap(src, num_messages, num_features);
  at::Tensor off = at::from_blob(const_cast<std::int64_t*>(offsets), {num_segments + 1}, at::TensorOptions().dtype(at::kLong));
  at::Tensor o = wrap(out, num_segments, num_features);
  const char* name = reduce == cpu::Reduce::max ? "max" : reduce_name(reduce);
  // segment_reduce has no out= form; the copy into the caller's buffer is part of what a caller pays.
  return make([s, off, o, name]() mutable {
    o.copy_(at::segment_reduce(s, name, c10::nullopt, c10::nullopt, off, 0, /*unsafe=*/true, at::Scalar(0.0f)));
  });
}

PeerCall gather_scale_scatter(const float* x, std::int64_t num_nodes, std::int64_t num_features, const std::int32_t* src_nodes,
                              const std::int32_t* dst_nodes, const float* weights, std::int64_t num_edges,
                              std::int64_t num_outputs, float* out) {
  at::Tensor xt = wrap(x, num_nodes, num_features);
  at::Tensor src = wrap_indices(src_nodes, num_edges);
  at::Tensor dst = wrap_indices(dst_nodes, num_edges);
  at::Tensor w = wrap_vector(weights, num_edges).view({-1, 1});
  at::Tensor o = wrap(out, num_outputs, num_features);
  return make([xt, src, dst, w, o]() mutable { o.zero_().index_add_(0, dst, xt.index_select(0, src).mul_(w)); });
}

PeerCall mm(const float* a, const float* b, std::int64_t m, std::int64_t k, std::int64_t n, const float* bias, float* c) {
  at::Tensor at_a = wrap(a, m, k);
  at::Tensor at_b = wrap(b, k, n);
  at::Tensor at_c = wrap(c, m, n);
  if (bias == nullptr) return make([at_a, at_b, at_c]() mutable { at::mm_out(at_c, at_a, at_b); });
  at::Tensor at_bias = wrap_vector(bias, n);
  return make([at_a, at_b, at_c, at_bias]() mutable { at::addmm_out(at_c, at_bias, at_a, at_b); });
}

PeerCall degree(const std::int32_t* indices, std::int64_t count, std::int64_t num_outputs, float* out) {
  at::Tensor i = indices_int64(indices, count);
  at::Tensor o = wrap_output(out, {num_outputs});
  return make([i, o, count]() mutable { o.zero_().scatter_add_(0, i, at::ones({count}, o.options())); });
}

PeerCall segment_mm(const float* a, const std::int32_t* offsets, std::int64_t num_segments, const float* weights, std::int64_t k,
                    std::int64_t n, float* c) {
  std::int64_t rows = offsets[num_segments];
  at::Tensor at_a = wrap(a, rows, k);
  at::Tensor at_w = wrap_input(weights, {num_segments, k, n});
  at::Tensor at_c = wrap(c, rows, n);
  std::vector<std::int64_t> off(offsets, offsets + num_segments + 1);
  return make([at_a, at_w, at_c, off]() mutable {
    for (std::size_t s = 0; s + 1 < off.size(); ++s) {
      if (off[s + 1] == off[s]) continue;
      at::Tensor c_rows = at_c.narrow(0, off[s], off[s + 1] - off[s]);
      at::mm_out(c_rows, at_a.narrow(0, off[s], off[s + 1] - off[s]), at_w[static_cast<std::int64_t>(s)]);
    }
  });
}

PeerCall unary(UnaryFn fn, float scalar, const float* x, std::int64_t count, float* out) {
  at::Tensor xt = wrap_vector(x, count);
  at::Tensor o = wrap_output(out, {count});
  switch (fn) {
    case UnaryFn::relu: return make([xt, o]() mutable { at::clamp_min_out(o, xt, 0); });
    case UnaryFn::leaky_relu: return make([xt, o, scalar]() mutable { at::leaky_relu_out(o, xt, scalar); });
    case UnaryFn::shifted_softplus:
      return make([xt, o]() mutable { at::softplus_out(o, xt, 1, 20).sub_(0.69314718055994530942); });
    case UnaryFn::exp: return make([xt, o]() mutable { at::exp_out(o, xt); });
    case UnaryFn::softplus: return make([xt, o]() mutable { at::softplus_out(o, xt, 1, 20); });
    case UnaryFn::sigmoid: return make([xt, o]() mutable { at::sigmoid_out(o, xt); });
    case UnaryFn::sqrt: return make([xt, o]() mutable { at::sqrt_out(o, xt); });
    case UnaryFn::log: return make([xt, o]() mutable { at::log_out(o, xt); });
    case UnaryFn::clamp_min: return make([xt, o, scalar]() mutable { at::clamp_min_out(o, xt, scalar); });
    case UnaryFn::scale: {
      at::Tensor s = at::scalar_tensor(scalar, at::TensorOptions().dtype(at::kFloat));
      return make([xt, o, s]() mutable { at::mul_out(o, xt, s); });
    }
    case UnaryFn::rsqrt_or_zero: return make([xt, o]() mutable { at::pow_out(o, xt, -0.5).masked_fill_(xt <= 0, 0); });
    case UnaryFn::reciprocal_or_zero: return make([xt, o]() mutable { at::reciprocal_out(o, xt).masked_fill_(xt == 0, 0); });
    case UnaryFn::cosine_cutoff: {
      at::Tensor pi_over_cutoff = at::scalar_tensor(3.14159265358979323846 / static_cast<double>(scalar), o.options());
      return make([xt, o, scalar, pi_over_cutoff]() mutable {
        at::mul_out(o, xt, pi_over_cutoff).cos_().add_(1.0).mul_(0.5).masked_fill_(xt >= scalar, 0);
      });
    }
  }
  throw std::logic_error("torch-cpu: unknown unary function");
}

PeerCall cast(DType from, DType to, float scale, const float* x, std::int64_t count, float* out) {
  // The scope names the call's half dtype, for a kernel libtorch lacks (PeerCall::operator()).
  ValueDTypeScope scope(to != DType::float32 ? to : from);
  at::Tensor xt = at::from_blob(const_cast<float*>(x), {count}, at::TensorOptions().dtype(at::kFloat));
  if (from != DType::float32) xt = xt.to(scalar_type(from));
  at::Tensor caller = at::from_blob(out, {count}, at::TensorOptions().dtype(at::kFloat));
  at::Tensor o = caller;
  if (to != DType::float32) {
    o = at::empty({count}, at::TensorOptions().dtype(scalar_type(to)));
    pending_copy_back.emplace_back(o, caller);
  }
  if (scale == 1.0f) return make([xt, o]() mutable { o.copy_(xt); });
  if (to == DType::float32) return make([xt, o, scale]() mutable { o.copy_(xt).mul_(static_cast<double>(scale)); });
  at::Tensor wide = at::empty({count}, at::TensorOptions().dtype(at::kFloat));
  if (from == DType::float32) {
    at::Tensor s = at::scalar_tensor(scale, at::TensorOptions().dtype(at::kFloat));
    return make([xt, o, wide, s]() mutable { o.copy_(at::mul_out(wide, xt, s)); });
  }
  return make([xt, o, wide, scale]() mutable { o.copy_(wide.copy_(xt).mul_(static_cast<double>(scale))); });
}

PeerCall binary(BinaryFn fn, const float* x, std::int64_t num_rows, std::int64_t num_features, const float* other,
                std::int64_t other_rows, std::int64_t other_groups, float* out) {
  const std::int64_t per_group = num_features / other_groups;
  at::Tensor xt = wrap(x, num_rows, num_features).view({num_rows, other_groups, per_group});
  at::Tensor b = wrap(other, other_rows, other_groups).view({other_rows, other_groups, 1});
  at::Tensor o = wrap(out, num_rows, num_features).view({num_rows, other_groups, per_group});
  switch (fn) {
    case BinaryFn::add: return make([xt, b, o]() mutable { at::add_out(o, xt, b); });
    case BinaryFn::subtract: return make([xt, b, o]() mutable { at::sub_out(o, xt, b); });
    case BinaryFn::multiply: return make([xt, b, o]() mutable { at::mul_out(o, xt, b); });
    case BinaryFn::divide: return make([xt, b, o]() mutable { at::div_out(o, xt, b); });
    // torch.eq gives bool; the mask a backward multiplies by is its float copy (two calls, as eager).
    case BinaryFn::equal: return make([xt, b, o]() mutable { o.copy_(at::eq(xt, b)); });
  }
  throw std::logic_error("torch-cpu: unknown binary function");
}

}  // namespace tilesim::kernels::torch_peer
