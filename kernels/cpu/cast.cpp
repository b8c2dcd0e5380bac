#include "kernels/cpu/cast.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/parallel.hpp"
#include "kernels/cpu/storage_convert.hpp"

namespace tilesim::kernels::cpu {

struct CastOp::Impl {
  virtual ~Impl() = default;
  virtual void run() = 0;
  virtual void output(float* out) const = 0;
};

namespace {

// A chunk of floats small enough to stay in L1 between its widening and its store.
constexpr std::int64_t kChunkElements = 4096;

template <class In, class Out>
class TypedCast final : public CastOp::Impl {
 public:
  TypedCast(const Op& op, const Operands& o) : scale_(op.cast_scale()), in_(o.input->size()), out_(o.input->size()) {
    // The operand's values are values of its dtype already: narrowing them is exact.
    narrow(o.input->data(), static_cast<std::int64_t>(in_.size()), in_.data());
  }

  void run() override {
    const auto n = static_cast<std::int64_t>(in_.size());
    const In* in = in_.data();
    Out* out = out_.data();
    const float scale = scale_;
    parallel::for_each_block(n, n * static_cast<std::int64_t>(sizeof(In) + sizeof(Out)), [&](std::int64_t begin, std::int64_t end) {
      if constexpr (std::is_same_v<In, float>) {
        if (scale == 1.0f) {
          // float32 in, no scale: the rounding store straight from the input (a copy for float32 out).
          rows::store(in + begin, end - begin, out + begin);
          return;
        }
      }
      float* x = parallel::scratch().get<float>(parallel::Scratch::rows, kChunkElements);
      for (std::int64_t c = begin; c < end; c += kChunkElements) {
        const std::int64_t m = std::min(kChunkElements, end - c);
        rows::load(in + c, m, x);
        if (scale != 1.0f)
          for (std::int64_t i = 0; i < m; ++i) x[i] *= scale;
        rows::store(x, m, out + c);
      }
    });
  }

  void output(float* out) const override { widen(out_.data(), static_cast<std::int64_t>(out_.size()), out); }

 private:
  float scale_;
  std::vector<In> in_;
  std::vector<Out> out_;
};

template <class In>
std::unique_ptr<CastOp::Impl> cast_from(const Op& op, const Operands& o) {
  switch (op.dtype) {
    case DType::float32: return std::make_unique<TypedCast<In, float>>(op, o);
    case DType::float16: return std::make_unique<TypedCast<In, Float16>>(op, o);
    case DType::bfloat16: return std::make_unique<TypedCast<In, BFloat16>>(op, o);
    case DType::int32: break;
  }
  throw std::invalid_argument("cpu backend: op '" + op.name + "': a cast to " + to_string(op.dtype) + ", which is not a value dtype");
}

}  // namespace

CastOp::CastOp(const Op& op, const Operands& operands) {
  if (op.kind != OpKind::cast) throw std::invalid_argument("cpu backend: op '" + op.name + "': CastOp takes a cast, not " + to_string(op.kind));
  if (operands.input == nullptr) throw std::invalid_argument("cpu backend: op '" + op.name + "': its input operand is missing");
  switch (op.input_dtype) {
    case DType::float32: impl_ = cast_from<float>(op, operands); return;
    case DType::float16: impl_ = cast_from<Float16>(op, operands); return;
    case DType::bfloat16: impl_ = cast_from<BFloat16>(op, operands); return;
    case DType::int32: break;
  }
  throw std::invalid_argument("cpu backend: op '" + op.name + "': a cast from " + to_string(op.input_dtype) + ", which is not a value dtype");
}

CastOp::~CastOp() = default;
void CastOp::run() { impl_->run(); }
void CastOp::output(float* out) const { impl_->output(out); }

}  // namespace tilesim::kernels::cpu
