#include "kernels/cpu/onednn_matmul.hpp"

#include <omp.h>

#include <dnnl.hpp>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

namespace tilesim::kernels::cpu {
namespace {

using dnnl::memory;

memory::data_type onednn_type(MatmulDtype dtype) {
  switch (dtype) {
    case MatmulDtype::float32: return memory::data_type::f32;
    case MatmulDtype::float16: return memory::data_type::f16;
    case MatmulDtype::bfloat16: return memory::data_type::bf16;
  }
  return memory::data_type::undef;
}

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// A primitive is built for the OpenMP thread count of its creation, so the count is part of the key.
using Key = std::tuple<int, std::int64_t, std::int64_t, std::int64_t, bool, bool, bool, int>;

Key key_of(MatmulDtype dtype, const MatmulShape& s) {
  return {static_cast<int>(dtype), s.m, s.k, s.n, s.a_transposed, s.b_transposed, s.has_bias, omp_get_max_threads()};
}

struct Entry {
  std::optional<dnnl::matmul> primitive;  // empty: no optimised kernel (the caller converts to float32)
  memory::desc a, b, bias, c;
  std::string kernel;
};

// A transposed operand is the stored matrix read with swapped strides (format tag ba); no copy.
Entry build(MatmulDtype dtype, const MatmulShape& s) {
  Entry e;
  const auto type = onednn_type(dtype);
  e.a = memory::desc({s.m, s.k}, type, s.a_transposed ? memory::format_tag::ba : memory::format_tag::ab);
  e.b = memory::desc({s.k, s.n}, type, s.b_transposed ? memory::format_tag::ba : memory::format_tag::ab);
  e.c = memory::desc({s.m, s.n}, type, memory::format_tag::ab);
  if (s.has_bias) e.bias = memory::desc({1, s.n}, type, memory::format_tag::ab);
  try {
    const auto desc = s.has_bias ? dnnl::matmul::desc(e.a, e.b, e.bias, e.c) : dnnl::matmul::desc(e.a, e.b, e.c);
    const dnnl::matmul::primitive_desc pd(desc, cpu_engine());
    e.kernel = pd.impl_info_str();
    // The reference implementation is a plain loop nest, far slower than converting to float32.
    if (e.kernel.rfind("ref", 0) == 0) {
      e.kernel.clear();
      return e;
    }
    e.primitive.emplace(pd);
  } catch (const dnnl::error&) {
    e.kernel.clear();  // no implementation for this dtype on this host
  }
  return e;
}

// Kept primitives. Bounded, so a sweep over many shapes does not grow memory without limit: when full
// it is emptied (a rebuild costs about a millisecond).
constexpr std::size_t kMaxCachedPrimitives = 512;

const Entry& cached(MatmulDtype dtype, const MatmulShape& s) {
  static std::mutex mutex;
  static std::map<Key, Entry> cache;
  const Key key = key_of(dtype, s);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= kMaxCachedPrimitives) cache.clear();
  return cache.emplace(key, build(dtype, s)).first->second;
}

}  // namespace

bool onednn_matmul(MatmulDtype dtype, const void* a, const void* b, const void* bias, void* c, const MatmulShape& shape) {
  const Entry& e = cached(dtype, shape);
  if (!e.primitive) return false;
  auto& engine = cpu_engine();
  // One stream per calling thread: the CPU stream runs the primitive on the caller's OpenMP team.
  thread_local dnnl::stream stream(engine);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, memory(e.a, engine, const_cast<void*>(a))},
                                          {DNNL_ARG_WEIGHTS, memory(e.b, engine, const_cast<void*>(b))},
                                          {DNNL_ARG_DST, memory(e.c, engine, c)}};
  if (shape.has_bias) args.emplace(DNNL_ARG_BIAS, memory(e.bias, engine, const_cast<void*>(bias)));
  e.primitive->execute(stream, args);
  stream.wait();
  return true;
}

std::string onednn_kernel(MatmulDtype dtype) {
  // A large square product: the kernel oneDNN picks for the products that matter (small ones may differ).
  MatmulShape s;
  s.m = s.k = s.n = 1024;
  return cached(dtype, s).kernel;
}

std::string onednn_version() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

bool onednn_allows_avx512() {
  // oneDNN's ISA values are cumulative bit sets: every level above avx512_core holds its bits.
  const auto effective = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto avx512_core = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  return (effective & avx512_core) == avx512_core;
}

}  // namespace tilesim::kernels::cpu
