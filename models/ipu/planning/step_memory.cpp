#include "models/ipu/planning/step_memory.hpp"

#include <algorithm>
#include <numeric>
#include <sstream>

#include "common/error.hpp"
#include "models/ipu/planning/linear_layout.hpp"
#include "sim/program.hpp"

namespace tilesim::ipu {

namespace {

constexpr std::ptrdiff_t kGraphInput = -1;

std::vector<TensorId> operands_of(const Op& op) {
  std::vector<TensorId> ids;
  for (const TensorId t : {op.input, op.indices, op.weight, op.bias, op.aux})
    if (t >= 0) ids.push_back(t);
  return ids;
}

// Tile 0's share of a tensor in the linear layout, as one aligned buffer.
std::int64_t tile_share(const TensorInfo& t, const IpuMachine& m) {
  return sim::align_buffer_offset(linear_tile_bytes(t.elements(), dtype_bytes(t.dtype), m));
}

std::string kib(std::int64_t bytes) {
  std::ostringstream s;
  s.precision(3);
  s << static_cast<double>(bytes) / 1024.0 << " KiB";
  return s.str();
}

// A forward op's output that a backward op reads: what recomputation drops.
bool kept_for_backward(const OpGraph& g, const std::vector<std::ptrdiff_t>& producer,
                       const std::vector<std::vector<std::size_t>>& readers, std::size_t t) {
  if (producer[t] == kGraphInput || g.ops[static_cast<std::size_t>(producer[t])].phase != OpPhase::forward) return false;
  return std::any_of(readers[t].begin(), readers[t].end(), [&](std::size_t r) { return g.ops[r].phase == OpPhase::backward; });
}

}  // namespace

StepMemory step_memory(const OpGraph& graph, const std::vector<std::int64_t>& op_tile_bytes, const IpuMachine& machine) {
  const std::size_t n_ops = graph.ops.size(), n_tensors = graph.tensors.size();
  std::vector<std::ptrdiff_t> producer(n_tensors, kGraphInput);
  std::vector<std::vector<std::size_t>> readers(n_tensors);
  for (std::size_t k = 0; k < n_ops; ++k) {
    producer[static_cast<std::size_t>(graph.ops[k].output)] = static_cast<std::ptrdiff_t>(k);
    for (TensorId t : operands_of(graph.ops[k])) readers[static_cast<std::size_t>(t)].push_back(k);
  }
  StepMemory mem;
  if (n_ops == 0) return mem;
  // Until when each tensor must stay: its last reader, the end of the step for a result nobody reads.
  std::vector<std::size_t> keep_until(n_tensors, 0);
  std::vector<bool> recomputed(n_tensors, false);
  std::vector<std::size_t> recompute_at(n_tensors, n_ops);
  for (std::size_t t = 0; t < n_tensors; ++t) {
    keep_until[t] = readers[t].empty() ? n_ops - 1 : readers[t].back();
    if (graph.recompute_activations && kept_for_backward(graph, producer, readers, t)) {
      recomputed[t] = true;
      for (std::size_t r : readers[t])
        if (graph.ops[r].phase == OpPhase::backward) recompute_at[t] = std::min(recompute_at[t], r);
    }
  }
  // A re-run needs its op's operands: recompute a recomputed one no later, keep any other until then.
  std::vector<std::size_t> work;
  for (std::size_t t = 0; t < n_tensors; ++t)
    if (recomputed[t]) work.push_back(t);
  while (!work.empty()) {
    const std::size_t t = work.back();
    work.pop_back();
    for (TensorId operand : operands_of(graph.ops[static_cast<std::size_t>(producer[t])])) {
      const auto u = static_cast<std::size_t>(operand);
      if (recomputed[u]) {
        if (recompute_at[t] < recompute_at[u]) {
          recompute_at[u] = recompute_at[t];
          work.push_back(u);
        }
      } else {
        keep_until[u] = std::max(keep_until[u], recompute_at[t]);
      }
    }
  }
  mem.live.resize(n_tensors);
  for (std::size_t t = 0; t < n_tensors; ++t) {
    const std::size_t from = producer[t] == kGraphInput ? 0 : static_cast<std::size_t>(producer[t]) + 1;
    if (readers[t].empty() && producer[t] == kGraphInput) continue;  // an input nothing reads
    if (!recomputed[t]) {
      if (from <= keep_until[t]) mem.live[t].push_back({from, keep_until[t]});
      continue;
    }
    std::size_t forward_last = static_cast<std::size_t>(producer[t]);
    for (std::size_t r : readers[t])
      if (graph.ops[r].phase != OpPhase::backward) forward_last = std::max(forward_last, r);
    if (from <= forward_last) mem.live[t].push_back({from, forward_last});
    mem.live[t].push_back({recompute_at[t], keep_until[t]});
    mem.recomputed.push_back(static_cast<std::size_t>(producer[t]));
    mem.recomputed_before.push_back(recompute_at[t]);
  }
  // Re-runs in the order they happen: by the op they precede, ancestors (earlier ops) first.
  std::vector<std::size_t> order(mem.recomputed.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::make_pair(mem.recomputed_before[a], mem.recomputed[a]) < std::make_pair(mem.recomputed_before[b], mem.recomputed[b]);
  });
  std::vector<std::size_t> ops_sorted, before_sorted;
  for (std::size_t i : order) {
    ops_sorted.push_back(mem.recomputed[i]);
    before_sorted.push_back(mem.recomputed_before[i]);
  }
  mem.recomputed = std::move(ops_sorted);
  mem.recomputed_before = std::move(before_sorted);

  mem.ops.resize(n_ops);
  std::vector<std::int64_t> share(n_tensors);
  for (std::size_t t = 0; t < n_tensors; ++t) share[t] = tile_share(graph.tensors[t], machine);
  for (std::size_t k = 0; k < n_ops; ++k) {
    const Op& op = graph.ops[k];
    mem.ops[k].op_tile_bytes = k < op_tile_bytes.size() ? op_tile_bytes[k] : 0;
    const std::vector<TensorId> own = operands_of(op);
    for (std::size_t t = 0; t < n_tensors; ++t) {
      if (static_cast<TensorId>(t) == op.output || std::find(own.begin(), own.end(), static_cast<TensorId>(t)) != own.end()) continue;
      for (const LiveInterval& i : mem.live[t]) {
        if (i.contains(k)) {
          mem.ops[k].live_tile_bytes += share[t];
          break;
        }
      }
    }
    if (mem.ops[k].total() > mem.ops[mem.peak_op].total()) mem.peak_op = k;
  }
  return mem;
}

void check_step_memory(const OpGraph& graph, const StepMemory& memory, const IpuMachine& machine) {
  const std::int64_t sram = machine.chip.sram_bytes_per_tile;
  std::size_t over = 0;
  for (const OpMemory& m : memory.ops) over += m.total() > sram ? 1 : 0;
  if (over == 0) return;
  const std::size_t k = memory.peak_op;
  const Op& op = graph.ops[k];
  // What is live across the op, largest first, and how much of it the backward keeps.
  std::vector<std::pair<std::int64_t, std::size_t>> live;
  std::int64_t activations = 0;
  std::vector<std::ptrdiff_t> producer(graph.tensors.size(), kGraphInput);
  std::vector<std::vector<std::size_t>> readers(graph.tensors.size());
  for (std::size_t j = 0; j < graph.ops.size(); ++j) {
    producer[static_cast<std::size_t>(graph.ops[j].output)] = static_cast<std::ptrdiff_t>(j);
    for (TensorId t : operands_of(graph.ops[j])) readers[static_cast<std::size_t>(t)].push_back(j);
  }
  // Live at op k only because a backward op reads it later: no forward or loss op reads it from k on.
  auto only_for_backward = [&](std::size_t t) {
    if (!kept_for_backward(graph, producer, readers, t)) return false;
    return std::none_of(readers[t].begin(), readers[t].end(), [&](std::size_t r) { return r >= k && graph.ops[r].phase != OpPhase::backward; });
  };
  const std::vector<TensorId> own = operands_of(op);
  bool training = false;
  for (const Op& o : graph.ops) training = training || o.phase == OpPhase::backward;
  for (std::size_t t = 0; t < graph.tensors.size(); ++t) {
    if (static_cast<TensorId>(t) == op.output || std::find(own.begin(), own.end(), static_cast<TensorId>(t)) != own.end()) continue;
    if (!std::any_of(memory.live[t].begin(), memory.live[t].end(), [&](const LiveInterval& i) { return i.contains(k); })) continue;
    const std::int64_t bytes = tile_share(graph.tensors[t], machine);
    live.push_back({bytes, t});
    if (only_for_backward(t)) activations += bytes;
  }
  std::sort(live.rbegin(), live.rend());
  std::string largest;
  for (std::size_t i = 0; i < std::min<std::size_t>(3, live.size()); ++i)
    largest += (i ? ", " : "") + graph.tensors[live[i].second].name + " " + kib(live[i].first);
  std::string next = "next step: ";
  if (training && !graph.recompute_activations)
    next += "set \"train\": {\"recompute\": true} in the workload (the backward recomputes the forward activations "
            "instead of keeping them in SRAM), or ";
  next += "use a smaller batch (fewer nodes or edges, or narrower features), or " + more_ipus_next_step(machine);
  const OpMemory& m = memory.ops[k];
  throw PlanError(std::string(training ? "the training step" : "the graph") + " does not fit on machine " + machine.chip.name +
                  ": at op \"" + op.name + "\" (" + to_string(op.kind) + ", " + to_string(op.phase) + " phase; " +
                  std::to_string(over) + " of " + std::to_string(graph.ops.size()) + " ops do not fit) the tensors live across it take " +
                  std::to_string(m.live_tile_bytes) + " bytes on tile 0" +
                  (activations > 0 ? " (" + std::to_string(activations) + " of them forward activations kept for the backward)" : "") +
                  " and the op itself needs " + std::to_string(m.op_tile_bytes) + ", " + std::to_string(m.total()) +
                  " bytes in all, but a tile has " + std::to_string(sram) + " bytes of SRAM" +
                  (largest.empty() ? "" : "; the largest live tensors: " + largest) +
                  (graph.recompute_activations ? "; activations are already recomputed (\"recompute\": true)" : "") + "; " + next);
}

}  // namespace tilesim::ipu
