#include "models/ipu/planning/step_memory.hpp"

#include <algorithm>
#include <numeric>
#include <sstream>
#include <tuple>
#include <utility>

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

// Where each tensor lies: its linear layout rotated to start on `first_tile` (wrapping round the chip),
// `share` bytes (its first tile's, the most any of its tiles holds) on each of its `tiles`.
struct Placement {
  std::int64_t first_tile = 0, tiles = 0, share = 0;
};

// The framework's placement of the graph's tensors: each linear mapping starts on the tile after the
// previous tensor's last, in the order the graph creates them. poputil's linear mapping always starts at
// tile 0, so PopART (under PopTorch) rotates each new tensor's mapping to begin where the last one ended
// (popart willow/src/popx/linearmapper.cpp, LinearMapper::mapTensor); thousands of small tensors then
// spread over the chip instead of stacking on tile 0, while a tensor spread over every tile still puts a
// share on each.
// The forward pass's tensors (those its ops read or write) come first, in the graph's order, then the
// rest (loss, backward, optimizer): a training step's forward tensors then lie where the same model's
// inference puts them, so training never spreads what inference stacks.
std::vector<Placement> place_tensors(const OpGraph& graph, const IpuMachine& m) {
  std::vector<bool> forward(graph.tensors.size(), false);
  for (const Op& op : graph.ops) {
    if (op.phase != OpPhase::forward) continue;
    for (const TensorId t : operands_of(op)) forward[static_cast<std::size_t>(t)] = true;
    forward[static_cast<std::size_t>(op.output)] = true;
  }
  std::vector<Placement> placement(graph.tensors.size());
  std::int64_t next = 0;
  for (const bool forward_pass : {true, false})
    for (std::size_t i = 0; i < graph.tensors.size(); ++i) {
      if (forward[i] != forward_pass) continue;
      const TensorInfo& t = graph.tensors[i];
      const LinearLayout layout = linear_layout(t.elements(), dtype_bytes(t.dtype), m);
      const std::int64_t tiles = std::max<std::int64_t>(1, std::min<std::int64_t>(layout.tiles_used, m.chip.num_tiles));
      placement[i] = {next, tiles, tile_share(t, m)};
      next = (next + tiles) % m.chip.num_tiles;
    }
  return placement;
}

// Bytes per tile of a set of placed tensors (a difference array round the chip).
class TileLoad {
 public:
  explicit TileLoad(std::int64_t tiles) : delta_(static_cast<std::size_t>(tiles) + 1, 0) {}
  void add(const Placement& p) {
    const auto n = static_cast<std::int64_t>(delta_.size()) - 1;
    const std::int64_t end = p.first_tile + p.tiles;
    span(p.first_tile, std::min(end, n), p.share);
    if (end > n) span(0, end - n, p.share);  // wraps round to tile 0
  }
  // The busiest tile and its bytes.
  std::pair<std::int64_t, std::int64_t> busiest() const {
    std::int64_t running = 0, best = 0, best_tile = 0;
    for (std::size_t tile = 0; tile + 1 < delta_.size(); ++tile) {
      running += delta_[tile];
      if (running > best) {
        best = running;
        best_tile = static_cast<std::int64_t>(tile);
      }
    }
    return {best_tile, best};
  }

 private:
  void span(std::int64_t from, std::int64_t to, std::int64_t bytes) {
    delta_[static_cast<std::size_t>(from)] += bytes;
    delta_[static_cast<std::size_t>(to)] -= bytes;
  }
  std::vector<std::int64_t> delta_;
};

bool covers(const Placement& p, std::int64_t tile, std::int64_t num_tiles) {
  return ((tile - p.first_tile) % num_tiles + num_tiles) % num_tiles < p.tiles;
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
  const std::vector<Placement> placement = place_tensors(graph, machine);
  for (std::size_t k = 0; k < n_ops; ++k) {
    const Op& op = graph.ops[k];
    mem.ops[k].op_tile_bytes = k < op_tile_bytes.size() ? op_tile_bytes[k] : 0;
    const std::vector<TensorId> own = operands_of(op);
    TileLoad load(machine.chip.num_tiles);
    for (std::size_t t = 0; t < n_tensors; ++t) {
      if (static_cast<TensorId>(t) == op.output || std::find(own.begin(), own.end(), static_cast<TensorId>(t)) != own.end()) continue;
      if (std::any_of(mem.live[t].begin(), mem.live[t].end(), [k](const LiveInterval& i) { return i.contains(k); }))
        load.add(placement[t]);
    }
    std::tie(mem.ops[k].live_busiest_tile, mem.ops[k].live_tile_bytes) = load.busiest();
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
  const std::vector<Placement> placement = place_tensors(graph, machine);
  bool training = false;
  for (const Op& o : graph.ops) training = training || o.phase == OpPhase::backward;
  for (std::size_t t = 0; t < graph.tensors.size(); ++t) {
    if (static_cast<TensorId>(t) == op.output || std::find(own.begin(), own.end(), static_cast<TensorId>(t)) != own.end()) continue;
    if (!std::any_of(memory.live[t].begin(), memory.live[t].end(), [&](const LiveInterval& i) { return i.contains(k); })) continue;
    if (!covers(placement[t], memory.ops[k].live_busiest_tile, machine.chip.num_tiles)) continue;
    const std::int64_t bytes = placement[t].share;
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
                  std::to_string(m.live_tile_bytes) + " bytes on tile " + std::to_string(m.live_busiest_tile) + " (their busiest)" +
                  (activations > 0 ? " (" + std::to_string(activations) + " of them forward activations kept for the backward)" : "") +
                  " and the op itself needs " + std::to_string(m.op_tile_bytes) + ", " + std::to_string(m.total()) +
                  " bytes in all, but a tile has " + std::to_string(sram) + " bytes of SRAM" +
                  (largest.empty() ? "" : "; the largest live tensors: " + largest) +
                  (graph.recompute_activations ? "; activations are already recomputed (\"recompute\": true)" : "") + "; " + next);
}

}  // namespace tilesim::ipu
