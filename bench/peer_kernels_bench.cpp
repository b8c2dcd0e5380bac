// tilesim's CPU kernels against the torch-cpu peer (ATen, same process, same data, same thread count):
// (a) the hydronet gather/scatter grid's corners and centre, (b) PyTorch Geometric's scatter benchmark
// shapes (N = 4k..64k nodes, E = 50 N edges, 64 features), with the GNN layers' other ops on the same
// shapes (degree, linear and RGCN's segment matmul over the N node rows, activations, the edge-weight
// scaling of the E messages), each op's tilesim kernel and its torch form(s) back to back, so their ratio is taken under the same machine load. The peer table at the end
// (peer_table.hpp) gives times, effective GB/s, speed-ups and their medians; the stream_copy rows give
// the machine's streaming bandwidth to read the large gathers against; (c) dense products (matmul_f32,
// matmul_bf16, matmul_f16 on shapes with every dimension >= 256 and on the GIN layer's 3312 x 3703 @
// 3703 x 64) through tilesim's matmul, OpenBLAS's SGEMM and ATen's mm. This host's ceilings are measured
// once, before the first of these benchmarks runs (kernels/cpu/host_calibration), so every row also
// gives its share of the measured ceiling. Run just these with --benchmark_filter=peer/.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "bench/peer_table.hpp"
#include "kernels/cpu/degree_count.hpp"
#include "kernels/cpu/host_calibration.hpp"
#include "kernels/cpu/elementwise.hpp"
#include "kernels/cpu/gather_scatter.hpp"
#include "kernels/cpu/matmul.hpp"
#include "kernels/cpu/openblas_coretype.hpp"
#include "kernels/cpu/scatter_reduce.hpp"
#include "kernels/cpu/spmm.hpp"
#ifdef TILESIM_HAVE_TORCH
#include "kernels/torch/torch_ops.hpp"
#endif

// OpenBLAS (the torch-cpu peer's BLAS, and the SGEMM rows) loads with the kernel set cpuid calls for.
TILESIM_SELECT_OPENBLAS_CORETYPE_AT_LOAD

namespace {

namespace cpu = tilesim::kernels::cpu;
using tilesim::bench::register_bytes;
using tilesim::bench::register_flops;

// This host's ceilings, measured once before the first peer benchmark (a few seconds, all threads), with
// fewer trials than `tilesim calibrate` takes: the table reads shares of them, not the ceilings themselves.
void measure_ceilings_once() {
  static const bool measured = [] {
    tilesim::cpu_model::CalibrationOptions options;
    options.trials = 3;
    options.flops_trial_s = 0.1;
    const auto r = tilesim::cpu_model::calibrate_host(options);
    tilesim::bench::Ceilings c;
    c.stream_bytes_per_s = r.stream_bytes_per_s;
    c.float32_fma_flops_per_s = r.float32_flops_per_s;
    for (const auto& [dtype, peak] : r.matmul_peaks) {
      c.matmul_flops_per_s[dtype] = peak.flops_per_s;
      c.matmul_instruction_set[dtype] = peak.instruction_set;
    }
    tilesim::bench::set_ceilings(c);
    return true;
  }();
  (void)measured;
}

// Page-aligned, so rows of 16 floats are whole cache lines (as from any large allocation).
struct AlignedFloats {
  explicit AlignedFloats(std::size_t n = 0) { resize(n); }
  void resize(std::size_t n) {
    data.reset(n ? static_cast<float*>(::operator new[](n * sizeof(float), std::align_val_t{4096})) : nullptr);
    size = n;
  }
  struct Free {
    void operator()(float* p) const { ::operator delete[](p, std::align_val_t{4096}); }
  };
  std::unique_ptr<float[], Free> data;
  std::size_t size = 0;
  float* get() const { return data.get(); }
};

// splitmix64: fast enough to fill the 800 MB inputs of the largest PyG shape in well under a second.
struct Random {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  float uniform() { return static_cast<float>(next() >> 40) * 0x1p-24f * 2.0f - 1.0f; }  // [-1, 1)
  std::int32_t below(std::int64_t n) { return static_cast<std::int32_t>((next() >> 33) % static_cast<std::uint64_t>(n)); }
};

// One shape's data. num_inputs x num_features values; indices into [0, range); gather reads table rows
// (the values), scatter ops treat the values as messages.
struct Shape {
  std::string label;
  std::int64_t num_inputs, num_features, num_outputs;
  bool values_only = false;  // the stream copy: no indices, tables or weights
};

// RGCN's relation count in the segment-matmul rows (the RGCN example has 4).
constexpr std::int64_t kRelations = 4;

struct Data {
  std::string label;
  AlignedFloats values;           // num_inputs x num_features
  std::vector<std::int32_t> gather_indices;   // num_outputs, in [0, num_inputs)
  std::vector<std::int32_t> scatter_indices;  // num_inputs, in [0, num_outputs)
  std::vector<std::int32_t> sorted_indices;   // scatter_indices sorted (CSR order)
  std::vector<std::int64_t> offsets;          // segments of sorted_indices
  std::vector<std::int32_t> edge_sources;     // num_inputs edges' source nodes, in [0, num_outputs)
  std::vector<float> edge_weights;
  AlignedFloats node_table;                   // num_outputs x num_features: the SpMM input and the mm left operand
  std::vector<float> weight_matrix;           // num_features x num_features
  std::vector<float> bias;
  std::vector<float> relation_weights;         // kRelations x num_features x num_features (segment matmul)
  std::vector<std::int32_t> relation_offsets;  // kRelations equal segments of the num_outputs node rows
  AlignedFloats out;                          // large enough for any op's output
};

// Only the current shape's data is kept: the largest PyG shape alone holds ~1.7 GB.
Data& data_for(const Shape& s) {
  static std::unique_ptr<Data> current;
  // Keyed by the dimensions too: a PyG shape's gather and scatter share a label but not their sizes.
  const std::string key = s.label + "/" + std::to_string(s.num_inputs) + "x" + std::to_string(s.num_features) + "x" +
                          std::to_string(s.num_outputs);
  if (current && current->label == key) return *current;
  current.reset();
  auto d = std::make_unique<Data>();
  d->label = key;
  Random rng{42};
  d->values.resize(static_cast<std::size_t>(s.num_inputs * s.num_features));
  for (std::size_t i = 0; i < d->values.size; ++i) d->values.get()[i] = rng.uniform();
  d->out.resize(static_cast<std::size_t>(std::max(s.num_inputs, s.num_outputs) * s.num_features));
  std::memset(d->out.get(), 0, d->out.size * sizeof(float));  // fault the pages in before timing
  if (s.values_only) {
    current = std::move(d);
    return *current;
  }
  d->gather_indices.resize(static_cast<std::size_t>(s.num_outputs));
  for (auto& i : d->gather_indices) i = rng.below(s.num_inputs);
  d->scatter_indices.resize(static_cast<std::size_t>(s.num_inputs));
  for (auto& i : d->scatter_indices) i = rng.below(s.num_outputs);
  d->sorted_indices = d->scatter_indices;
  std::sort(d->sorted_indices.begin(), d->sorted_indices.end());
  d->offsets = cpu::segment_offsets(d->sorted_indices.data(), s.num_inputs, s.num_outputs);
  d->edge_sources.resize(static_cast<std::size_t>(s.num_inputs));
  for (auto& i : d->edge_sources) i = rng.below(s.num_outputs);
  d->edge_weights.resize(static_cast<std::size_t>(s.num_inputs));
  for (auto& w : d->edge_weights) w = rng.uniform();
  d->node_table.resize(static_cast<std::size_t>(s.num_outputs * s.num_features));
  for (std::size_t i = 0; i < d->node_table.size; ++i) d->node_table.get()[i] = rng.uniform();
  d->weight_matrix.resize(static_cast<std::size_t>(s.num_features * s.num_features));
  for (auto& w : d->weight_matrix) w = rng.uniform();
  d->bias.resize(static_cast<std::size_t>(s.num_features));
  for (auto& b : d->bias) b = rng.uniform();
  d->relation_weights.resize(static_cast<std::size_t>(kRelations * s.num_features * s.num_features));
  for (auto& w : d->relation_weights) w = rng.uniform();
  for (std::int64_t r = 0; r <= kRelations; ++r) d->relation_offsets.push_back(static_cast<std::int32_t>(s.num_outputs * r / kRelations));
  current = std::move(d);
  return *current;
}

using Call = std::function<void()>;
// Makes the call for one shape's data (built once per benchmark, outside the timed loop).
using MakeCall = std::function<Call(const Shape&, Data&)>;

void add(const std::string& op, const Shape& s, const std::string& impl, double bytes, MakeCall make) {
  const std::string name = "peer/" + op + "/" + s.label + "/" + impl;
  register_bytes(name, bytes);
  benchmark::RegisterBenchmark(name.c_str(), [s, make, bytes](benchmark::State& state) {
    measure_ceilings_once();
    Data& d = data_for(s);
    const Call call = make(s, d);
    for (auto _ : state) {
      call();
      benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(bytes * static_cast<double>(state.iterations())));
  })->UseRealTime()->Unit(benchmark::kMicrosecond)->Repetitions(3)->ReportAggregatesOnly(true)->MinTime(0.1);
}

void add_gather(const Shape& s) {
  const double bytes = static_cast<double>(s.num_outputs) * (4 + 2.0 * s.num_features * 4);
  add("gather", s, "tilesim", bytes, [](const Shape& s, Data& d) -> Call {
    return [&s, &d] { cpu::gather_f32(d.values.get(), s.num_inputs, s.num_features, d.gather_indices.data(), s.num_outputs, d.out.get()); };
  });
  // The obvious single-threaded loop, for the small-call target (tilesim within 2x of it).
  add("gather", s, "plain_loop", bytes, [](const Shape& s, Data& d) -> Call {
    return [&s, &d] {
      const auto row_bytes = static_cast<std::size_t>(s.num_features) * sizeof(float);
      for (std::int64_t i = 0; i < s.num_outputs; ++i)
        std::memcpy(d.out.get() + i * s.num_features, d.values.get() + std::int64_t{d.gather_indices[static_cast<std::size_t>(i)]} * s.num_features,
                    row_bytes);
    };
  });
#ifdef TILESIM_HAVE_TORCH
  add("gather", s, "torch_index_select", bytes, [](const Shape& s, Data& d) -> Call {
    auto call = std::make_shared<tilesim::kernels::torch_peer::PeerCall>(tilesim::kernels::torch_peer::index_select(
        d.values.get(), s.num_inputs, s.num_features, d.gather_indices.data(), s.num_outputs, d.out.get()));
    return [call] { (*call)(); };
  });
#endif
}

double scatter_bytes(const Shape& s) {
  return static_cast<double>(s.num_inputs) * (4 + s.num_features * 4.0) + static_cast<double>(s.num_outputs) * s.num_features * 4;
}

void add_scatter(const std::string& op, cpu::Reduce reduce, const Shape& s) {
  const double bytes = scatter_bytes(s);
  add(op, s, "tilesim", bytes, [reduce](const Shape& s, Data& d) -> Call {
    return [&s, &d, reduce] {
      cpu::scatter_reduce(reduce, d.values.get(), s.num_inputs, s.num_features, d.scatter_indices.data(), s.num_outputs, d.out.get());
    };
  });
  if (reduce == cpu::Reduce::sum) {
    add(op, s, "plain_loop", bytes, [](const Shape& s, Data& d) -> Call {
      return [&s, &d] {
        float* out = d.out.get();
        std::memset(out, 0, static_cast<std::size_t>(s.num_outputs * s.num_features) * sizeof(float));
        for (std::int64_t i = 0; i < s.num_inputs; ++i) {
          float* __restrict to = out + std::int64_t{d.scatter_indices[static_cast<std::size_t>(i)]} * s.num_features;
          const float* __restrict from = d.values.get() + i * s.num_features;
          for (std::int64_t f = 0; f < s.num_features; ++f) to[f] += from[f];
        }
      };
    });
  }
#ifdef TILESIM_HAVE_TORCH
  namespace peer = tilesim::kernels::torch_peer;
  add(op, s, reduce == cpu::Reduce::sum ? "torch_scatter_add_" : "torch_scatter_reduce_", bytes, [reduce](const Shape& s, Data& d) -> Call {
    auto call = std::make_shared<peer::PeerCall>(
        peer::scatter(reduce, d.values.get(), s.num_inputs, s.num_features, d.scatter_indices.data(), s.num_outputs, d.out.get()));
    return [call] { (*call)(); };
  });
  if (reduce == cpu::Reduce::sum) {
    add(op, s, "torch_index_add_", bytes, [](const Shape& s, Data& d) -> Call {
      auto call = std::make_shared<peer::PeerCall>(
          peer::index_add(d.values.get(), s.num_inputs, s.num_features, d.scatter_indices.data(), s.num_outputs, d.out.get()));
      return [call] { (*call)(); };
    });
  }
#endif
}

void add_segment_sum(const Shape& s) {
  const double bytes = static_cast<double>(s.num_inputs) * s.num_features * 4 + static_cast<double>(s.num_outputs) * (8 + s.num_features * 4.0);
  add("segment_sum", s, "tilesim", bytes, [](const Shape& s, Data& d) -> Call {
    return [&s, &d] { cpu::segment_reduce(cpu::Reduce::sum, d.values.get(), s.num_features, d.offsets.data(), s.num_outputs, d.out.get()); };
  });
#ifdef TILESIM_HAVE_TORCH
  namespace peer = tilesim::kernels::torch_peer;
  add("segment_sum", s, "torch_segment_reduce", bytes, [](const Shape& s, Data& d) -> Call {
    auto call = std::make_shared<peer::PeerCall>(
        peer::segment_reduce(cpu::Reduce::sum, d.values.get(), s.num_inputs, s.num_features, d.offsets.data(), s.num_outputs, d.out.get()));
    return [call] { (*call)(); };
  });
#endif
}

// SpMM over num_inputs edges between num_outputs nodes (as PyG's message passing with edge weights).
void add_spmm(const Shape& s) {
  const double bytes = static_cast<double>(s.num_inputs) * (12 + s.num_features * 4.0) + static_cast<double>(s.num_outputs) * s.num_features * 4;
  add("spmm", s, "tilesim", bytes, [](const Shape& s, Data& d) -> Call {
    return [&s, &d] {
      cpu::gather_scale_scatter(d.node_table.get(), s.num_outputs, s.num_features, d.edge_sources.data(), d.scatter_indices.data(),
                                d.edge_weights.data(), s.num_inputs, s.num_outputs, d.out.get());
    };
  });
#ifdef TILESIM_HAVE_TORCH
  namespace peer = tilesim::kernels::torch_peer;
  add("spmm", s, "torch_unfused", bytes, [](const Shape& s, Data& d) -> Call {
    auto call = std::make_shared<peer::PeerCall>(peer::gather_scale_scatter(d.node_table.get(), s.num_outputs, s.num_features,
                                                                            d.edge_sources.data(), d.scatter_indices.data(),
                                                                            d.edge_weights.data(), s.num_inputs, s.num_outputs, d.out.get()));
    return [call] { (*call)(); };
  });
#endif
}

// A GNN layer's linear transform: [nodes x F] @ [F x F] + bias.
void add_linear(const Shape& s) {
  const double bytes = 4.0 * (s.num_outputs * s.num_features * 2 + s.num_features * s.num_features + s.num_features);
  const double flops = 2.0 * s.num_outputs * s.num_features * s.num_features;
  register_flops("peer/addmm/" + s.label + "/tilesim", flops, "float32");
  add("addmm", s, "tilesim", bytes, [](const Shape& s, Data& d) -> Call {
    return [&s, &d] {
      cpu::matmul_f32(d.node_table.get(), d.weight_matrix.data(), s.num_outputs, s.num_features, s.num_features, d.bias.data(), d.out.get());
    };
  });
#ifdef TILESIM_HAVE_TORCH
  namespace peer = tilesim::kernels::torch_peer;
  add("addmm", s, "torch_addmm", bytes, [](const Shape& s, Data& d) -> Call {
    auto call = std::make_shared<peer::PeerCall>(
        peer::mm(d.node_table.get(), d.weight_matrix.data(), s.num_outputs, s.num_features, s.num_features, d.bias.data(), d.out.get()));
    return [call] { (*call)(); };
  });
#endif
}

// PyG's degree(index, N): E indices into N nodes.
void add_degree(const Shape& s) {
  const double bytes = 4.0 * (s.num_inputs + s.num_outputs);
  add("degree", s, "tilesim", bytes, [](const Shape& s, Data& d) -> Call {
    return [&s, &d] { cpu::degree_count_f32(d.scatter_indices.data(), s.num_inputs, s.num_outputs, d.out.get()); };
  });
#ifdef TILESIM_HAVE_TORCH
  namespace peer = tilesim::kernels::torch_peer;
  add("degree", s, "torch_scatter_add_", bytes, [](const Shape& s, Data& d) -> Call {
    auto call = std::make_shared<peer::PeerCall>(peer::degree(d.scatter_indices.data(), s.num_inputs, s.num_outputs, d.out.get()));
    return [call] { (*call)(); };
  });
#endif
}

// RGCN's transform through segment matmul: the N node rows in kRelations equal segments, each times its
// own F x F weight.
void add_segment_matmul(const Shape& s) {
  const double bytes = 4.0 * (s.num_outputs * s.num_features * 2 + kRelations * s.num_features * s.num_features);
  register_flops("peer/segment_mm/" + s.label + "/tilesim", 2.0 * s.num_outputs * s.num_features * s.num_features, "float32");
  add("segment_mm", s, "tilesim", bytes, [](const Shape& s, Data& d) -> Call {
    return [&s, &d] {
      cpu::segment_matmul_f32(d.node_table.get(), d.relation_offsets.data(), kRelations, d.relation_weights.data(), s.num_features,
                              s.num_features, d.out.get());
    };
  });
#ifdef TILESIM_HAVE_TORCH
  namespace peer = tilesim::kernels::torch_peer;
  add("segment_mm", s, "torch_mm_per_segment", bytes, [](const Shape& s, Data& d) -> Call {
    auto call = std::make_shared<peer::PeerCall>(peer::segment_mm(d.node_table.get(), d.relation_offsets.data(), kRelations,
                                                                  d.relation_weights.data(), s.num_features, s.num_features, d.out.get()));
    return [call] { (*call)(); };
  });
#endif
}

// Elementwise functions over the N x F node table (a layer's activation).
void add_unary(const std::string& op, tilesim::UnaryFn fn, float scalar, const Shape& s) {
  const double bytes = 8.0 * s.num_outputs * s.num_features;
  add(op, s, "tilesim", bytes, [fn, scalar](const Shape& s, Data& d) -> Call {
    return [&s, &d, fn, scalar] { cpu::unary_f32(fn, scalar, d.node_table.get(), s.num_outputs * s.num_features, d.out.get()); };
  });
#ifdef TILESIM_HAVE_TORCH
  namespace peer = tilesim::kernels::torch_peer;
  add(op, s, "torch", bytes, [fn, scalar](const Shape& s, Data& d) -> Call {
    auto call = std::make_shared<peer::PeerCall>(peer::unary(fn, scalar, d.node_table.get(), s.num_outputs * s.num_features, d.out.get()));
    return [call] { (*call)(); };
  });
#endif
}

// GCN's message scaling: the E x F messages times one weight per edge (other [E, 1]).
void add_edge_scale(const Shape& s) {
  const double bytes = 4.0 * s.num_inputs * (2 * s.num_features + 1);
  add("edge_scale", s, "tilesim", bytes, [](const Shape& s, Data& d) -> Call {
    return [&s, &d] {
      cpu::binary_f32(tilesim::BinaryFn::multiply, d.values.get(), s.num_inputs, s.num_features, d.edge_weights.data(), s.num_inputs, 1,
                      d.out.get());
    };
  });
#ifdef TILESIM_HAVE_TORCH
  namespace peer = tilesim::kernels::torch_peer;
  add("edge_scale", s, "torch_mul_out", bytes, [](const Shape& s, Data& d) -> Call {
    auto call = std::make_shared<peer::PeerCall>(peer::binary(tilesim::BinaryFn::multiply, d.values.get(), s.num_inputs, s.num_features,
                                                              d.edge_weights.data(), s.num_inputs, 1, d.out.get()));
    return [call] { (*call)(); };
  });
#endif
}

// Streaming bandwidth: a 512 MiB copy split over the threads, once with ordinary stores and once with
// non-temporal ones; the table takes the faster as the machine's figure.
void add_stream_copy() {
  constexpr std::int64_t kFloats = 64LL * 1024 * 1024;  // 256 MiB each way
  const Shape s{"256MiB", kFloats, 1, kFloats, true};
  const double bytes = 2.0 * kFloats * 4;
  for (const bool streaming : {false, true}) {
    add("stream_copy", s, streaming ? "tilesim_nt" : "tilesim", bytes, [streaming](const Shape& s, Data& d) -> Call {
      return [&s, &d, streaming] {
        const float* from = d.values.get();
        float* to = d.out.get();
        const std::int64_t n = s.num_inputs;
#pragma omp parallel
        {
          const int parts = omp_get_num_threads(), part = omp_get_thread_num();
          const std::int64_t begin = n / parts * part / 16 * 16, end = part + 1 == parts ? n : n / parts * (part + 1) / 16 * 16;
          if (streaming) {
#if defined(__AVX512F__)
            for (std::int64_t i = begin; i < end; i += 16) _mm512_stream_ps(to + i, _mm512_load_ps(from + i));
            _mm_sfence();
#else
            std::memcpy(to + begin, from + begin, static_cast<std::size_t>(end - begin) * sizeof(float));
#endif
          } else {
            for (std::int64_t i = begin; i < end; ++i) to[i] = from[i];
          }
        }
      };
    });
  }
}

// A dense product's operands in T, filled once per shape (values in [-1, 1), stored in T).
template <class T>
struct Product {
  std::int64_t m, k, n;
  std::vector<T> a, b, c;
  Product(std::int64_t m_, std::int64_t k_, std::int64_t n_) : m(m_), k(k_), n(n_) {
    Random rng{7};
    a.resize(static_cast<std::size_t>(m * k));
    b.resize(static_cast<std::size_t>(k * n));
    c.resize(static_cast<std::size_t>(m * n));
    for (auto& v : a) v = cpu::from_float<T>(rng.uniform());
    for (auto& v : b) v = cpu::from_float<T>(rng.uniform());
  }
};

// Only the current product's operands are kept (as data_for does for the op shapes).
template <class T>
Product<T>& product_for(std::int64_t m, std::int64_t k, std::int64_t n) {
  static std::unique_ptr<Product<T>> current;
  if (!current || current->m != m || current->k != k || current->n != n) {
    current.reset();
    current = std::make_unique<Product<T>>(m, k, n);
  }
  return *current;
}

void add_product_benchmark(const std::string& name, double bytes, double flops, const std::string& dtype,
                           std::function<Call()> make) {
  register_bytes(name, bytes);
  register_flops(name, flops, dtype);
  benchmark::RegisterBenchmark(name.c_str(), [make, flops](benchmark::State& state) {
    measure_ceilings_once();
    const Call call = make();
    for (auto _ : state) {
      call();
      benchmark::ClobberMemory();
    }
    state.counters["GFLOP/s"] = benchmark::Counter(flops * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
  })->UseRealTime()->Unit(benchmark::kMillisecond)->Repetitions(3)->ReportAggregatesOnly(true)->MinTime(0.2);
}

// c[m x n] = a[m x k] @ b[k x n] in T through tilesim's matmul (oneDNN), and in float32 also through
// OpenBLAS's SGEMM and ATen's mm (the torch-cpu peer).
template <class T>
void add_product(const std::string& op, std::int64_t m, std::int64_t k, std::int64_t n) {
  const std::string label = std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  const std::string dtype = cpu::storage_name<T>();
  const double bytes = static_cast<double>(sizeof(T)) * static_cast<double>(m * k + k * n + m * n);
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
  const std::string prefix = "peer/" + op + "/" + label + "/";
  add_product_benchmark(prefix + "tilesim", bytes, flops, dtype, [m, k, n]() -> Call {
    auto& p = product_for<T>(m, k, n);
    return [&p] { cpu::matmul<T>(p.a.data(), p.b.data(), p.m, p.k, p.n, nullptr, p.c.data()); };
  });
  if constexpr (std::is_same_v<T, float>) {
    add_product_benchmark(prefix + "openblas_sgemm", bytes, flops, dtype, [m, k, n]() -> Call {
      auto& p = product_for<float>(m, k, n);
      return [&p] { cpu::openblas_matmul_f32(p.a.data(), false, p.b.data(), false, p.m, p.k, p.n, nullptr, p.c.data()); };
    });
#ifdef TILESIM_HAVE_TORCH
    add_product_benchmark(prefix + "torch_mm", bytes, flops, dtype, [m, k, n]() -> Call {
      auto& p = product_for<float>(m, k, n);
      auto call = std::make_shared<tilesim::kernels::torch_peer::PeerCall>(
          tilesim::kernels::torch_peer::mm(p.a.data(), p.b.data(), p.m, p.k, p.n, nullptr, p.c.data()));
      return [call] { (*call)(); };
    });
#endif
  }
}

// Every dimension >= 256 (4096 x 1024 @ 1024 x 1024: a wide layer over 4k rows; 2048^3), and the GIN
// layer's first linear (Cora-sized: 3312 nodes x 3703 features @ 3703 x 64).
void add_products() {
  add_product<float>("matmul_f32", 4096, 1024, 1024);
  add_product<cpu::BFloat16>("matmul_bf16", 4096, 1024, 1024);
  add_product<cpu::Float16>("matmul_f16", 4096, 1024, 1024);
  add_product<float>("matmul_f32", 2048, 2048, 2048);
  add_product<cpu::BFloat16>("matmul_bf16", 2048, 2048, 2048);
  add_product<float>("matmul_f32", 3312, 3703, 64);
  add_product<cpu::BFloat16>("matmul_bf16", 3312, 3703, 64);
  add_product<cpu::Float16>("matmul_f16", 3312, 3703, 64);
}

const std::vector<Shape> kHydronetGrid = {
    {"16x16x32", 16, 16, 32},         {"16x16x32768", 16, 16, 32768},       {"16x512x32", 16, 512, 32},
    {"16x512x32768", 16, 512, 32768}, {"4096x16x32", 4096, 16, 32},         {"4096x16x32768", 4096, 16, 32768},
    {"4096x512x32", 4096, 512, 32},   {"4096x512x32768", 4096, 512, 32768}, {"256x64x1024", 256, 64, 1024},
};

int register_all() {
  add_stream_copy();
  add_products();
  // Hydronet points: num_inputs x num_features x num_outputs, as the workload's ops read them.
  for (const Shape& s : kHydronetGrid) {
    add_gather(s);
    add_scatter("scatter_add", cpu::Reduce::sum, s);
  }
  // PyG's scatter benchmark: E = 50 N messages of 64 features into N rows (scatter ops), and the gather
  // that feeds them, N-row table, E lookups.
  for (const std::int64_t n : {4000, 8000, 16000, 32000, 64000}) {
    const std::string tag = "pyg_N" + std::to_string(n / 1000) + "k";
    const Shape scatter_shape{tag + "_E" + std::to_string(50 * n / 1000) + "k_F64", 50 * n, 64, n};
    const Shape gather_shape{scatter_shape.label, n, 64, 50 * n};
    add_gather(gather_shape);
    add_scatter("scatter_add", cpu::Reduce::sum, scatter_shape);
    add_scatter("scatter_mean", cpu::Reduce::mean, scatter_shape);
    add_scatter("scatter_max", cpu::Reduce::max, scatter_shape);
    add_segment_sum(scatter_shape);
    add_spmm(scatter_shape);
    add_linear(scatter_shape);
    add_degree(scatter_shape);
    add_segment_matmul(scatter_shape);
    add_unary("relu", tilesim::UnaryFn::relu, 0, scatter_shape);
    add_unary("exp", tilesim::UnaryFn::exp, 0, scatter_shape);
    add_unary("ssp", tilesim::UnaryFn::shifted_softplus, 0, scatter_shape);
    add_edge_scale(scatter_shape);
  }
  return 0;
}

const int registered = register_all();

}  // namespace

#ifdef TILESIM_HAVE_TORCH
// ATen's pool gets the OpenMP thread count the kernels use before any benchmark runs.
static const int torch_threads_set = [] {
  tilesim::kernels::torch_peer::set_num_threads(omp_get_max_threads());
  return 0;
}();
#endif
