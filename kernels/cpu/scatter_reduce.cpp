// Scatter and segment reductions: one engine for sum, mean and max over float32, float16 and bfloat16
// storage, with the strategy chosen per call from the shape (see choose_strategy).
#include "kernels/cpu/scatter_reduce.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "common/error.hpp"
#include "kernels/cpu/parallel.hpp"
#include "kernels/cpu/row_ops.hpp"
#include "kernels/cpu/spmm.hpp"

namespace tilesim::kernels::cpu {
namespace {

using parallel::part_begin;
using parallel::Scratch;

template <class T>
constexpr bool kFloatStorage = std::is_same_v<T, float>;

// Per-thread partial outputs (each thread sums a share of the messages into its own float32 copy of the
// output, then the copies are combined row by row) cost one zeroing and one combining pass over
// threads x output bytes; the messages cost their own bytes. They win when the messages outweigh the
// copies several times over (PyG's E = 50 N: 50 x), and are refused beyond this many bytes of copies,
// where the owner-computes path's extra index scans are the cheaper overhead.
constexpr std::int64_t kPartialsMaxBytes = 64 * 1024 * 1024;
constexpr std::int64_t kPartialsMinMessagesPerCopiedRow = 4;

// The owner-computes path tests each index against the thread's row block. Random indices make that
// branch unpredictable (a mispredict per message on average), so matches are first collected without
// branches into a list of this many candidates, then summed.
constexpr int kOwnerChunk = 256;

// Checking that the indices are sorted costs one read of them (4 bytes a message beside the message's
// own 4 x num_features): worth it only for rows at least this wide.
constexpr std::int64_t kSortedCheckMinFeatures = 8;

// Where message i's row comes from: row i of a dense array (scatter), or a weighted row of a node table
// picked by an index (the fused gather-scale-scatter of SpMM), so one engine serves both.
template <class T>
struct DenseMessages {
  const T* src;
  std::int64_t num_features;
  template <class Op>
  void accumulate(std::int64_t i, float* acc) const {
    rows::combine<Op>(src + i * num_features, num_features, acc);
  }
};

template <class T>
struct WeightedGather {
  const T* x;
  std::int64_t num_features;
  const std::int32_t* src_nodes;
  const float* weights;
  template <class Op>
  void accumulate(std::int64_t i, float* acc) const {
    static_assert(std::is_same_v<Op, rows::Sum>, "SpMM sums weighted rows");
    rows::add_scaled(x + std::int64_t{src_nodes[i]} * num_features, weights[i], num_features, acc);
  }
};

enum class Strategy { serial, sorted_segments, partials, owner_computes };

template <class T>
Strategy choose_strategy(std::int64_t num_messages, std::int64_t num_features, std::int64_t num_outputs, int threads,
                         const std::int32_t* indices, bool* sorted) {
  *sorted = false;
  if (threads == 1) return Strategy::serial;
  if (num_features >= kSortedCheckMinFeatures && indices_sorted(indices, num_messages)) {
    *sorted = true;
    return Strategy::sorted_segments;
  }
  const std::int64_t copies = kFloatStorage<T> ? threads - 1 : threads;
  const std::int64_t copy_bytes = copies * num_outputs * num_features * static_cast<std::int64_t>(sizeof(float));
  if (copy_bytes <= kPartialsMaxBytes && num_messages >= kPartialsMinMessagesPerCopiedRow * num_outputs * threads)
    return Strategy::partials;
  return Strategy::owner_computes;
}

// The float32 accumulator of a row block: the output itself for float32 storage (no extra pass), else
// scratch that finish_row() rounds into the output.
template <class T>
float* accumulator(T* out_block, std::int64_t floats, Scratch::Slot slot) {
  if constexpr (kFloatStorage<T>) {
    (void)floats;
    (void)slot;
    return out_block;
  } else {
    (void)out_block;
    return parallel::scratch().get<float>(slot, static_cast<std::size_t>(floats));
  }
}

// Turns one accumulated row into its output: mean divides by the count, rows no message reached become
// 0 (max's identity is -inf), and 16-bit storage is rounded here, once. count < 0: not counted (sum,
// where the identity already is the empty row's value).
template <class T>
void finish_row(Reduce reduce, float* acc, std::int64_t count, std::int64_t num_features, T* out_row) {
  if (count == 0) {
    rows::fill(acc, num_features, 0.0f);
  } else if (reduce == Reduce::mean && count > 0) {
    rows::divide(acc, static_cast<float>(count), num_features);
  }
  if constexpr (kFloatStorage<T>) {
    if (acc != out_row) std::memcpy(out_row, acc, static_cast<std::size_t>(num_features) * sizeof(float));
  } else {
    rows::store(acc, num_features, out_row);
  }
}

template <class Op, class T, class Messages>
void run_serial(Reduce reduce, const Messages& msgs, std::int64_t num_messages, std::int64_t num_features, const std::int32_t* indices,
                std::int64_t num_outputs, T* out) {
  const std::int64_t out_floats = num_outputs * num_features;
  float* acc = accumulator(out, out_floats, Scratch::rows);
  const bool counted = reduce != Reduce::sum;
  std::int32_t* counts = counted ? parallel::scratch().get<std::int32_t>(Scratch::counts, static_cast<std::size_t>(num_outputs)) : nullptr;
  rows::fill(acc, out_floats, Op::identity());
  if (counted) std::memset(counts, 0, static_cast<std::size_t>(num_outputs) * sizeof(std::int32_t));
  for (std::int64_t i = 0; i < num_messages; ++i) {
    const std::int64_t r = indices[i];
    msgs.template accumulate<Op>(i, acc + r * num_features);
    if (counted) ++counts[r];
  }
  if (!counted && kFloatStorage<T>) return;  // a float32 sum is finished in place
  for (std::int64_t r = 0; r < num_outputs; ++r)
    finish_row(reduce, acc + r * num_features, counted ? counts[r] : -1, num_features, out + r * num_features);
}

// Sorted indices: thread t takes the messages from about t/threads of the way through, moved back to
// the first message of that message's row, so every row is reduced by exactly one thread, into a small
// float32 row that stays in L1, and written once.
template <class Op, class T, class Messages>
void run_sorted(Reduce reduce, const Messages& msgs, std::int64_t num_messages, std::int64_t num_features, const std::int32_t* indices,
                std::int64_t num_outputs, T* out, int threads) {
#pragma omp parallel num_threads(threads)
  {
    const int parts = omp_get_num_threads();
    const int part = omp_get_thread_num();
    auto first_row = [&](int p) -> std::int64_t {
      if (p == 0) return 0;
      if (p == parts) return num_outputs;
      const std::int64_t m = part_begin(num_messages, parts, p);
      return m < num_messages ? indices[m] : num_outputs;
    };
    const std::int64_t r_begin = first_row(part);
    const std::int64_t r_end = std::max(r_begin, first_row(part + 1));
    std::int64_t m = std::lower_bound(indices, indices + num_messages, static_cast<std::int32_t>(std::min<std::int64_t>(r_begin, INT32_MAX))) - indices;
    float* row = parallel::scratch().get<float>(Scratch::rows, static_cast<std::size_t>(num_features));
    for (std::int64_t r = r_begin; r < r_end; ++r) {
      rows::fill(row, num_features, Op::identity());
      const std::int64_t first = m;
      for (; m < num_messages && indices[m] == r; ++m) msgs.template accumulate<Op>(m, row);
      finish_row(reduce, row, m - first, num_features, out + r * num_features);
    }
  }
}

template <class Op, class T, class Messages>
void run_partials(Reduce reduce, const Messages& msgs, std::int64_t num_messages, std::int64_t num_features, const std::int32_t* indices,
                  std::int64_t num_outputs, T* out, int threads) {
  const std::int64_t out_floats = num_outputs * num_features;
  const bool counted = reduce != Reduce::sum;
  // Thread 0 accumulates straight into a float32 output; every other copy (all of them for 16-bit
  // storage) lives in the calling thread's scratch.
  const std::int64_t copies = kFloatStorage<T> ? threads - 1 : threads;
  float* partials = parallel::scratch().get<float>(Scratch::partials, static_cast<std::size_t>(copies * out_floats));
  std::int32_t* counts =
      counted ? parallel::scratch().get<std::int32_t>(Scratch::counts, static_cast<std::size_t>(threads * num_outputs)) : nullptr;
  auto copy_of = [&](int thread) -> float* {
    if constexpr (kFloatStorage<T>) {
      if (thread == 0) return out;
      return partials + (thread - 1) * out_floats;
    } else {
      return partials + thread * out_floats;
    }
  };
#pragma omp parallel num_threads(threads)
  {
    const int parts = omp_get_num_threads();
    const int part = omp_get_thread_num();
    float* acc = copy_of(part);
    std::int32_t* my_counts = counted ? counts + part * num_outputs : nullptr;
    rows::fill(acc, out_floats, Op::identity());
    if (counted) std::memset(my_counts, 0, static_cast<std::size_t>(num_outputs) * sizeof(std::int32_t));
    const std::int64_t end = part_begin(num_messages, parts, part + 1);
    for (std::int64_t i = part_begin(num_messages, parts, part); i < end; ++i) {
      const std::int64_t r = indices[i];
      msgs.template accumulate<Op>(i, acc + r * num_features);
      if (counted) ++my_counts[r];
    }
#pragma omp barrier
    // Combine the copies in thread order, each thread over its own block of rows.
    const std::int64_t r_end = part_begin(num_outputs, parts, part + 1);
    float* first = copy_of(0);
    for (std::int64_t r = part_begin(num_outputs, parts, part); r < r_end; ++r) {
      float* row = first + r * num_features;
      std::int64_t count = counted ? counts[r] : -1;
      for (int other = 1; other < parts; ++other) {
        rows::combine<Op>(static_cast<const float*>(copy_of(other) + r * num_features), num_features, row);
        if (counted) count += counts[other * num_outputs + r];
      }
      if (counted || !kFloatStorage<T>) finish_row(reduce, row, count, num_features, out + r * num_features);
    }
  }
}

// Large outputs: each thread owns a contiguous block of output rows, sets it to the identity, scans
// every index and combines the messages that land in its block, in message order (so a float32 sum has
// the serial loop's bits). Every thread reads every index: 4 bytes a message beside the
// 4 x num_features of the rows it adds, cheap at one host's thread counts. Measured on the hydronet
// points with 32768 output rows this ran 2-6x faster than bucketing the messages by row first (a
// counting sort). Rows are split evenly, so indices crowding into one block are summed by one thread.
template <class Op, class T, class Messages>
void run_owner_computes(Reduce reduce, const Messages& msgs, std::int64_t num_messages, std::int64_t num_features,
                        const std::int32_t* indices, std::int64_t num_outputs, T* out, int threads) {
  const bool counted = reduce != Reduce::sum;
#pragma omp parallel num_threads(threads)
  {
    const int parts = omp_get_num_threads();
    const int part = omp_get_thread_num();
    const std::int64_t r_begin = part_begin(num_outputs, parts, part);
    const std::int64_t block_rows = part_begin(num_outputs, parts, part + 1) - r_begin;
    float* acc = accumulator(out + r_begin * num_features, block_rows * num_features, Scratch::rows);
    std::int32_t* counts =
        counted ? parallel::scratch().get<std::int32_t>(Scratch::counts, static_cast<std::size_t>(block_rows)) : nullptr;
    rows::fill(acc, block_rows * num_features, Op::identity());
    if (counted) std::memset(counts, 0, static_cast<std::size_t>(block_rows) * sizeof(std::int32_t));
    std::int32_t mine[kOwnerChunk];
    for (std::int64_t chunk = 0; chunk < num_messages; chunk += kOwnerChunk) {
      const int chunk_size = static_cast<int>(std::min<std::int64_t>(kOwnerChunk, num_messages - chunk));
      int found = 0;
      for (int k = 0; k < chunk_size; ++k) {
        // One unsigned comparison tests r_begin <= r < r_begin + block_rows; the slot is always written.
        mine[found] = k;
        found += static_cast<std::uint64_t>(indices[chunk + k] - r_begin) < static_cast<std::uint64_t>(block_rows) ? 1 : 0;
      }
      for (int j = 0; j < found; ++j) {
        const std::int64_t i = chunk + mine[j];
        const std::int64_t local = indices[i] - r_begin;
        msgs.template accumulate<Op>(i, acc + local * num_features);
        if (counted) ++counts[local];
      }
    }
    if (counted || !kFloatStorage<T>) {
      for (std::int64_t r = 0; r < block_rows; ++r)
        finish_row(reduce, acc + r * num_features, counted ? counts[r] : -1, num_features, out + (r_begin + r) * num_features);
    }
  }
}

// bytes_moved: what the call reads and writes, which decides whether threads pay off.
template <class Op, class T, class Messages>
void scatter_with(Reduce reduce, const Messages& msgs, std::int64_t num_messages, std::int64_t num_features,
                  const std::int32_t* indices, std::int64_t num_outputs, T* out, std::int64_t bytes_moved) {
  if (num_outputs == 0 || num_features == 0) return;
  const int threads = parallel::threads_for(bytes_moved);
  bool sorted = false;
  switch (choose_strategy<T>(num_messages, num_features, num_outputs, threads, indices, &sorted)) {
    case Strategy::serial: return run_serial<Op>(reduce, msgs, num_messages, num_features, indices, num_outputs, out);
    case Strategy::sorted_segments: return run_sorted<Op>(reduce, msgs, num_messages, num_features, indices, num_outputs, out, threads);
    case Strategy::partials: return run_partials<Op>(reduce, msgs, num_messages, num_features, indices, num_outputs, out, threads);
    case Strategy::owner_computes:
      return run_owner_computes<Op>(reduce, msgs, num_messages, num_features, indices, num_outputs, out, threads);
  }
}

template <class Op, class T>
void segments_with(Reduce reduce, const T* src, std::int64_t num_features, const std::int64_t* offsets, std::int64_t num_segments,
                   T* out) {
  if (num_segments == 0 || num_features == 0) return;
  const std::int64_t num_messages = offsets[num_segments];
  const auto value_bytes = static_cast<std::int64_t>(sizeof(T));
  const std::int64_t bytes_moved = (num_messages + num_segments) * num_features * value_bytes + num_segments * 8;
  const int threads = parallel::threads_for(bytes_moved);
  auto reduce_rows = [&](std::int64_t r_begin, std::int64_t r_end) {
    float* row = parallel::scratch().get<float>(Scratch::rows, static_cast<std::size_t>(num_features));
    for (std::int64_t r = r_begin; r < r_end; ++r) {
      rows::fill(row, num_features, Op::identity());
      for (std::int64_t m = offsets[r]; m < offsets[r + 1]; ++m) rows::combine<Op>(src + m * num_features, num_features, row);
      finish_row(reduce, row, offsets[r + 1] - offsets[r], num_features, out + r * num_features);
    }
  };
  if (threads == 1) return reduce_rows(0, num_segments);
  // Threads split the messages, not the rows, so a few heavy rows still spread over the cores: thread t
  // starts at the first row beginning at or after message t/threads of the way through.
#pragma omp parallel num_threads(threads)
  {
    const int parts = omp_get_num_threads();
    const int part = omp_get_thread_num();
    auto first_row = [&](int p) -> std::int64_t {
      if (p == 0) return 0;
      if (p == parts) return num_segments;
      return std::lower_bound(offsets, offsets + num_segments, part_begin(num_messages, parts, p)) - offsets;
    };
    reduce_rows(first_row(part), first_row(part + 1));
  }
}

}  // namespace

namespace parallel {
Scratch& scratch() {
  thread_local Scratch s;
  return s;
}
}  // namespace parallel

std::string to_string(Reduce reduce) {
  switch (reduce) {
    case Reduce::sum: return "sum";
    case Reduce::mean: return "mean";
    case Reduce::max: return "max";
  }
  return "unknown";
}

std::optional<Reduce> reduce_from_string(const std::string& name) {
  for (Reduce r : {Reduce::sum, Reduce::mean, Reduce::max})
    if (to_string(r) == name) return r;
  return std::nullopt;
}

bool indices_sorted(const std::int32_t* indices, std::int64_t count) {
  // Branch-free within a block so the loop vectorises, with an exit between blocks: unsorted (random)
  // indices are usually rejected within the first block; sorted ones are read to the end.
  constexpr std::int64_t kBlock = 1024;
  for (std::int64_t begin = 1; begin < count; begin += kBlock) {
    const std::int64_t end = std::min(count, begin + kBlock);
    int descents = 0;
    for (std::int64_t i = begin; i < end; ++i) descents |= indices[i] < indices[i - 1] ? 1 : 0;
    if (descents != 0) return false;
  }
  return true;
}

std::vector<std::int64_t> segment_offsets(const std::int32_t* sorted_indices, std::int64_t count, std::int64_t num_segments) {
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(num_segments + 1), 0);
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int32_t r = sorted_indices[i];
    if (r < 0 || r >= num_segments)
      throw InputError("segment_offsets: indices[" + std::to_string(i) + "] = " + std::to_string(r) + " is outside [0, " +
                       std::to_string(num_segments) + ")");
    if (i > 0 && r < sorted_indices[i - 1])
      throw InputError("segment_offsets: indices are not sorted: indices[" + std::to_string(i) + "] = " + std::to_string(r) +
                       " < indices[" + std::to_string(i - 1) + "] = " + std::to_string(sorted_indices[i - 1]));
    ++offsets[static_cast<std::size_t>(r) + 1];
  }
  for (std::size_t s = 1; s < offsets.size(); ++s) offsets[s] += offsets[s - 1];
  return offsets;
}

template <class T>
void scatter_reduce(Reduce reduce, const T* src, std::int64_t num_messages, std::int64_t num_features, const std::int32_t* indices,
                    std::int64_t num_outputs, T* out) {
  const auto value_bytes = static_cast<std::int64_t>(sizeof(T));
  const std::int64_t bytes_moved = num_messages * (4 + num_features * value_bytes) + num_outputs * num_features * value_bytes;
  const DenseMessages<T> msgs{src, num_features};
  if (reduce == Reduce::max)
    scatter_with<rows::Max>(reduce, msgs, num_messages, num_features, indices, num_outputs, out, bytes_moved);
  else
    scatter_with<rows::Sum>(reduce, msgs, num_messages, num_features, indices, num_outputs, out, bytes_moved);
}

template <class T>
void gather_scale_scatter(const T* x, std::int64_t /*num_nodes*/, std::int64_t num_features, const std::int32_t* src_nodes,
                          const std::int32_t* dst_nodes, const float* weights, std::int64_t num_edges, std::int64_t num_outputs,
                          T* out) {
  // Per edge: two indices and a weight, one row read (from the node table, often cache-resident);
  // the output written once.
  const auto value_bytes = static_cast<std::int64_t>(sizeof(T));
  const std::int64_t bytes_moved = num_edges * (12 + num_features * value_bytes) + num_outputs * num_features * value_bytes;
  const WeightedGather<T> msgs{x, num_features, src_nodes, weights};
  scatter_with<rows::Sum>(Reduce::sum, msgs, num_edges, num_features, dst_nodes, num_outputs, out, bytes_moved);
}

template <class T>
void segment_reduce(Reduce reduce, const T* src, std::int64_t num_features, const std::int64_t* offsets, std::int64_t num_segments,
                    T* out) {
  if (reduce == Reduce::max)
    segments_with<rows::Max>(reduce, src, num_features, offsets, num_segments, out);
  else
    segments_with<rows::Sum>(reduce, src, num_features, offsets, num_segments, out);
}

template void scatter_reduce<float>(Reduce, const float*, std::int64_t, std::int64_t, const std::int32_t*, std::int64_t, float*);
template void scatter_reduce<Float16>(Reduce, const Float16*, std::int64_t, std::int64_t, const std::int32_t*, std::int64_t, Float16*);
template void scatter_reduce<BFloat16>(Reduce, const BFloat16*, std::int64_t, std::int64_t, const std::int32_t*, std::int64_t, BFloat16*);
template void gather_scale_scatter<float>(const float*, std::int64_t, std::int64_t, const std::int32_t*, const std::int32_t*,
                                          const float*, std::int64_t, std::int64_t, float*);
template void gather_scale_scatter<Float16>(const Float16*, std::int64_t, std::int64_t, const std::int32_t*, const std::int32_t*,
                                            const float*, std::int64_t, std::int64_t, Float16*);
template void gather_scale_scatter<BFloat16>(const BFloat16*, std::int64_t, std::int64_t, const std::int32_t*,
                                             const std::int32_t*, const float*, std::int64_t, std::int64_t, BFloat16*);
template void segment_reduce<float>(Reduce, const float*, std::int64_t, const std::int64_t*, std::int64_t, float*);
template void segment_reduce<Float16>(Reduce, const Float16*, std::int64_t, const std::int64_t*, std::int64_t, Float16*);
template void segment_reduce<BFloat16>(Reduce, const BFloat16*, std::int64_t, const std::int64_t*, std::int64_t, BFloat16*);

}  // namespace tilesim::kernels::cpu
