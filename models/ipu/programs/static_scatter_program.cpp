// scatter_add, scatter_mean and scatter_max with indices known when the program is compiled
// (static_index_program.hpp): messages and output are in the linear layout.
//   combine: each tile folds, in place, the messages it holds for the same destination row into one
//            partial (the messages are dead once scattered, so no extra memory);
//   exchange: the partials travel to the tiles owning their destination rows, in rounds sized to the
//            SRAM each owner has left (a tile owning hub rows receives the most, in the most rounds);
//   fold:    each owner folds what arrived into its output rows, filled beforehand with the identity;
//            at the end scatter_mean multiplies by the reciprocal of each row's count (known when
//            compiled) and scatter_max turns rows that received nothing from -inf to 0.
// Supersteps: 0 combines and fills the output with the identity, then sends round 0; step k folds what
// round k - 1 brought (step 1 also the partials already on their owner) and sends round k; the last
// step folds the last round and finishes. Each step below builds one of these parts.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "common/error.hpp"
#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/programs/linear_runs.hpp"
#include "models/ipu/programs/static_index_program.hpp"
#include "models/ipu/programs/value_storage.hpp"
#include "sim/program.hpp"

namespace tilesim::ipu {

namespace {

// A run of one message row held by one tile: `count` values at `element` of the tile's message
// buffer, columns [col, col + count) of a message for output row `row`.
struct MessageRun {
  std::int64_t tile = 0;
  std::int32_t row = 0;
  std::int64_t col = 0, count = 0, element = 0;
};

// `count` values folded into the output at `dst_element` from `src_element` of buffer `from`
// (0: the tile's received partials, 1: its own message buffer).
struct Fold {
  std::int64_t dst_element = 0, src_element = 0, count = 0;
  std::int32_t from = 0;
};

// A partial travelling to its owner: from `src_element` of tile `src_tile`'s message buffer to
// `dst_element` of the owner's output.
struct Remote {
  std::int64_t owner = 0, dst_element = 0, src_tile = 0, src_element = 0, count = 0;
};

// Each fold stored at the value type V (value_storage.hpp): a float16 partial rounds per addition.
template <class V>
void fold_into(OpKind kind, V* y, const V* x, std::int64_t n) {
  if (kind == OpKind::scatter_max) {
    for (std::int64_t j = 0; j < n; ++j) store(&y[j], std::max(value(y[j]), value(x[j])));
  } else {
    for (std::int64_t j = 0; j < n; ++j) store(&y[j], value(y[j]) + value(x[j]));
  }
}

// Per-worker cycles of folding `folds` (sorted by destination): the folds into one destination run are
// one strided reduce of their partials into it (each partial one more pass over its vectors), and the
// vectors of all runs are shared evenly over the workers (a long run is cut by columns).
std::vector<sim::Cycles> fold_worker_cycles(const std::vector<Fold>& folds, std::int64_t workers, const CodeletCosts& c) {
  sim::Cycles total = 0;
  for (std::size_t k = 0; k < folds.size();) {
    std::size_t j = k;
    while (j < folds.size() && folds[j].dst_element == folds[k].dst_element) ++j;
    const std::int64_t partials = static_cast<std::int64_t>(j - k) + 1;  // the destination itself and the folds
    total += reduce_worker_cycles(folds[k].count, partials, c) - c.reduce_prologue_worker_cycles;
    k = j;
  }
  const sim::Cycles each = folds.empty() ? 0 : c.reduce_prologue_worker_cycles + ceil_div(total, workers);
  return std::vector<sim::Cycles>(static_cast<std::size_t>(workers), each);
}

std::int64_t elements_of(const std::vector<Fold>& folds) {
  std::int64_t elements = 0;
  for (const Fold& f : folds) elements += f.count;
  return elements;
}

// The static scatter's program as its steps build it: the partials' routes, their exchange rounds, and
// the supersteps the vertices and transfers go into.
struct StaticScatter {
  StaticScatter(const Op& op, const std::vector<std::int32_t>& indices, const IpuMachine& machine, bool keep_messages);

  void add_fold_copies();
  std::vector<MessageRun> message_runs() const;
  void combine_messages();
  std::vector<std::int64_t> receive_budgets() const;
  void assign_rounds(const std::vector<std::int64_t>& budget);
  void add_steps();
  void route_partials();
  void add_combine_vertices();
  void add_owner_vertices(std::size_t o, const std::vector<std::int32_t>& count);
  sim::Vertex identity_fill_vertex(std::size_t o, Range mine);
  std::shared_ptr<const std::vector<float>> mean_scale(Range mine, const std::vector<std::int32_t>& count) const;
  sim::Vertex fold_vertex(std::size_t o, bool finish, std::vector<Fold> list, Range mine,
                          const std::shared_ptr<const std::vector<float>>& scale);
  OpProgram finish();

  const Op& op;
  const std::vector<std::int32_t>& indices;
  const IpuMachine& machine;
  const CodeletCosts& costs;
  const OpKind kind;
  const bool keep_messages;
  const std::int64_t num_messages, num_features, out_rows;  // messages [num_messages, num_features], out [out_rows, num_features]
  const std::int64_t W;  // worker contexts
  const std::int64_t vb;  // bytes per value (the op's type)
  const LinearLayout messages, output;
  const std::size_t num_machine_tiles;
  const float identity;
  LinearProgram linear;
  // Where the partials are folded: in the messages themselves, or in a copy of them when a later op
  // still reads the messages.
  std::vector<sim::BufferId> fold_buf;
  std::vector<std::vector<Fold>> combine, local;  // combine: by message tile; local: by owner tile
  std::vector<Remote> remote;
  std::vector<std::int64_t> round_of, offset_of, receive_bytes;  // round_of, offset_of: by remote
  std::int64_t rounds = 1;
  std::vector<sim::BufferId> receive_buf;
  std::vector<sim::Superstep> steps;
  std::vector<std::vector<std::vector<Fold>>> received;  // by round, then owner tile
};

StaticScatter::StaticScatter(const Op& op, const std::vector<std::int32_t>& indices, const IpuMachine& machine, bool keep_messages)
    : op(op),
      indices(indices),
      machine(machine),
      costs(machine.codelets),
      kind(op.kind),
      keep_messages(keep_messages),
      num_messages(op.shape.num_inputs),
      num_features(op.shape.num_features),
      out_rows(op.shape.num_outputs),
      W(machine.chip.worker_contexts),
      vb(machine.value_bytes()),
      messages(linear_layout(num_messages * num_features, vb, machine)),
      output(linear_layout(out_rows * num_features, vb, machine)),
      num_machine_tiles(static_cast<std::size_t>(machine.chip.num_tiles)),
      identity(kind == OpKind::scatter_max ? -std::numeric_limits<float>::infinity() : 0.0f),
      linear(linear_program(op, "messages", messages, output, vb)),
      fold_buf(linear.input),
      combine(num_machine_tiles),
      local(num_machine_tiles) {
  require_value_dtype(op, machine);
}

void StaticScatter::add_fold_copies() {
  for (std::size_t t = 0; t < linear.input.size(); ++t) {
    fold_buf[t] = linear.op.program.add_buffer("partials (copy of the messages)", static_cast<sim::TileId>(t),
                                               messages.tile_range(static_cast<std::int64_t>(t)).size() * vb);
  }
}

// Every message's runs (cut at the message layout's tiles), sorted by tile, destination row and columns.
std::vector<MessageRun> StaticScatter::message_runs() const {
  std::vector<MessageRun> runs;
  runs.reserve(static_cast<std::size_t>(num_messages) + static_cast<std::size_t>(messages.tiles_used));
  for (std::int64_t e = 0; e < num_messages; ++e) {
    const std::int32_t d = indices[static_cast<std::size_t>(e)];
    for_each_run(messages, e, messages, e, num_features, 0, num_features,
                 [&](const RowRun& run) { runs.push_back({run.src_tile, d, run.col, run.count, run.src_element}); });
  }
  std::sort(runs.begin(), runs.end(), [](const MessageRun& a, const MessageRun& b) {
    return std::tie(a.tile, a.row, a.col, a.count, a.element) < std::tie(b.tile, b.row, b.col, b.count, b.element);
  });
  return runs;
}

// Combine: the message runs of one tile, destination row and columns fold into the first of them
// (the partial), in place: the messages are dead once scattered. Each partial then folds into its
// output rows on its own tile (local) or travels to their owner (remote).
void StaticScatter::combine_messages() {
  const std::vector<MessageRun> runs = message_runs();
  for (std::size_t k = 0; k < runs.size();) {
    const MessageRun& lead = runs[k];
    std::size_t j = k + 1;
    for (; j < runs.size() && runs[j].tile == lead.tile && runs[j].row == lead.row && runs[j].col == lead.col && runs[j].count == lead.count; ++j) {
      combine[static_cast<std::size_t>(lead.tile)].push_back({lead.element, runs[j].element, lead.count, 1});
    }
    for_each_run(output, lead.row, output, lead.row, num_features, lead.col, lead.col + lead.count, [&](const RowRun& run) {
      const std::int64_t src_element = lead.element + (run.col - lead.col);
      if (run.dst_tile == lead.tile) {
        local[static_cast<std::size_t>(run.dst_tile)].push_back({run.dst_element, src_element, run.count, 1});
      } else {
        remote.push_back({run.dst_tile, run.dst_element, lead.tile, src_element, run.count});
      }
    });
    k = j;
  }
}

// The bytes each tile may receive partials into in one round: the planner's share of its SRAM left by
// its messages (and their copy) and output rows, or failing that all of it. Throws tilesim::PlanError
// for a tile without room to receive a row.
std::vector<std::int64_t> StaticScatter::receive_budgets() const {
  auto own_elements = [](const LinearLayout& l, std::size_t t) {
    return t < static_cast<std::size_t>(l.tiles_used) ? l.tile_range(static_cast<std::int64_t>(t)).size() : 0;
  };
  std::vector<std::int64_t> budget(num_machine_tiles, 0);
  const auto sram = machine.chip.sram_bytes_per_tile;
  const auto share = static_cast<std::int64_t>(machine.planner.memory_fraction * static_cast<double>(sram));
  for (std::size_t t = 0; t < num_machine_tiles; ++t) {
    const std::int64_t own = (keep_messages ? 2 : 1) * sim::align_buffer_offset(own_elements(messages, t) * vb) +
                             sim::align_buffer_offset(own_elements(output, t) * vb);
    budget[t] = share - own >= num_features * vb ? share - own : sram - own;
    if (budget[t] < std::min<std::int64_t>(num_features, output.elements_per_tile) * vb) {
      throw PlanError("op \"" + op.name + "\" (" + to_string(kind) + ", indices compiled into the exchange) does not fit on machine " +
                      machine.chip.name + ": tile " + std::to_string(t) + " needs " + std::to_string(own) +
                      " bytes for its messages and output rows and room to receive a row, but a tile has " +
                      std::to_string(sram) + " bytes of SRAM; next step: " + more_ipus_next_step(machine) +
                      ", or use a smaller batch (fewer nodes or edges, or narrower features)");
    }
  }
  return budget;
}

// Exchange rounds: each owner receives its partials in as few rounds as fit its budget; a tile owning
// rows of many edges (a hub) takes the most rounds. Sets each remote partial's round and offset in the
// owner's receive buffer, and the buffer's size.
void StaticScatter::assign_rounds(const std::vector<std::int64_t>& budget) {
  std::stable_sort(remote.begin(), remote.end(), [](const Remote& a, const Remote& b) { return a.owner < b.owner; });
  round_of.assign(remote.size(), 0);
  offset_of.assign(remote.size(), 0);
  receive_bytes.assign(num_machine_tiles, 0);
  for (std::size_t k = 0; k < remote.size();) {
    const auto o = static_cast<std::size_t>(remote[k].owner);
    std::int64_t round = 0, used = 0;
    for (; k < remote.size() && static_cast<std::size_t>(remote[k].owner) == o; ++k) {
      const std::int64_t bytes = remote[k].count * vb;
      if (used + bytes > budget[o]) {
        ++round;
        used = 0;
      }
      round_of[k] = round;
      offset_of[k] = used;
      used += bytes;
      receive_bytes[o] = std::max(receive_bytes[o], used);
    }
    rounds = std::max(rounds, round + 1);
  }
}

// The receive buffers and the rounds + 1 supersteps, named.
void StaticScatter::add_steps() {
  receive_buf.assign(num_machine_tiles, -1);
  for (std::size_t t = 0; t < num_machine_tiles; ++t) {
    if (receive_bytes[t] > 0) receive_buf[t] = linear.op.program.add_buffer("received partials", static_cast<sim::TileId>(t), receive_bytes[t]);
  }
  steps.resize(static_cast<std::size_t>(rounds) + 1);
  for (std::int64_t k = 0; k <= rounds; ++k) {
    auto& st = steps[static_cast<std::size_t>(k)];
    st.name = k == 0 ? "combine" : k == rounds ? "fold and finish" : "fold round " + std::to_string(k - 1);
    st.compute.name = k == 0 ? "combine messages" : "fold partials";
    st.exchange.name = k < rounds ? "partials to owners, round " + std::to_string(k) : "none";
  }
}

// Each remote partial's transfer in its round, and the fold it becomes on its owner after that round.
void StaticScatter::route_partials() {
  received.assign(static_cast<std::size_t>(rounds), std::vector<std::vector<Fold>>(num_machine_tiles));
  for (std::size_t k = 0; k < remote.size(); ++k) {
    const Remote& r = remote[k];
    const auto o = static_cast<std::size_t>(r.owner);
    steps[static_cast<std::size_t>(round_of[k])].exchange.transfers.push_back(
        {{fold_buf[static_cast<std::size_t>(r.src_tile)], r.src_element * vb}, r.count * vb, {{receive_buf[o], offset_of[k]}}});
    received[static_cast<std::size_t>(round_of[k])][o].push_back({r.dst_element, offset_of[k] / vb, r.count, 0});
  }
  remote.clear();
  remote.shrink_to_fit();
}

// Superstep 0 on each message tile: the combine folds (after copying the messages when they are kept,
// at the fill's store rate: one 64-bit store per worker cycle).
void StaticScatter::add_combine_vertices() {
  for (std::size_t t = 0; t < static_cast<std::size_t>(messages.tiles_used); ++t) {
    auto folds = std::make_shared<const std::vector<Fold>>(std::move(combine[t]));
    const std::int64_t elements = elements_of(*folds);
    linear.op.sram_read_bytes += 2 * elements * vb;
    linear.op.sram_write_bytes += elements * vb;
    if (folds->empty() && !keep_messages) continue;
    sim::Vertex v;
    v.codelet = keep_messages ? "copy and combine messages" : "combine messages";
    v.worker_cycles = fold_worker_cycles(*folds, W, costs);
    const std::int64_t bytes = messages.tile_range(static_cast<std::int64_t>(t)).size() * vb;
    if (keep_messages) {
      const auto share = worker_shares(bytes, W);
      for (std::int64_t w = 0; w < W; ++w) v.worker_cycles[static_cast<std::size_t>(w)] += fill_worker_cycles(share[static_cast<std::size_t>(w)], costs);
      linear.op.sram_read_bytes += bytes;
      linear.op.sram_write_bytes += bytes;
    }
    v.supervisor_cycles = costs.supervisor_cycles;
    v.buffers = {{linear.input[t], 0}, {fold_buf[t], 0}};
    v.execute = with_value_storage(machine.value_dtype, [&](auto storage) -> sim::VertexBody {
      using V = decltype(storage);
      return [folds, kind = kind, keep_messages = keep_messages, bytes](const sim::VertexContext& ctx) {
        V* m = ctx.as<V>(1);
        if (keep_messages) std::memcpy(ctx.data(1), ctx.data(0), static_cast<std::size_t>(bytes));
        for (const Fold& f : *folds) fold_into<V>(kind, m + f.dst_element, m + f.src_element, f.count);
      };
    });
    steps[0].compute.vertices.push_back({static_cast<sim::TileId>(t), std::move(v)});
  }
}

// Output tile o: its rows filled with the identity in superstep 0, then in superstep k the folds of
// what round k - 1 brought (and in superstep 1 its local partials); the last one finishes (mean: times
// 1 / count; max: empty rows to 0) even when nothing arrives.
void StaticScatter::add_owner_vertices(std::size_t o, const std::vector<std::int32_t>& count) {
  const Range mine = output.tile_range(static_cast<std::int64_t>(o));
  steps[0].compute.vertices.push_back({static_cast<sim::TileId>(o), identity_fill_vertex(o, mine)});
  const auto scale = mean_scale(mine, count);
  for (std::int64_t k = 1; k <= rounds; ++k) {
    std::vector<Fold> list = std::move(received[static_cast<std::size_t>(k - 1)][o]);
    if (k == 1) list.insert(list.end(), local[o].begin(), local[o].end());
    const bool finish = k == rounds;
    if (list.empty() && !(finish && kind != OpKind::scatter_add)) continue;
    steps[static_cast<std::size_t>(k)].compute.vertices.push_back(
        {static_cast<sim::TileId>(o), fold_vertex(o, finish, std::move(list), mine, scale)});
  }
}

sim::Vertex StaticScatter::identity_fill_vertex(std::size_t o, Range mine) {
  sim::Vertex v;
  v.codelet = "fill";
  for (std::int64_t bytes : worker_shares(mine.size() * vb, W)) v.worker_cycles.push_back(fill_worker_cycles(bytes, costs));
  v.supervisor_cycles = costs.supervisor_cycles;
  v.buffers = {{linear.output[o], 0}};
  const std::int64_t n = mine.size();
  v.execute = with_value_storage(machine.value_dtype, [&](auto storage) -> sim::VertexBody {
    using V = decltype(storage);
    return [n, x = stored<V>(identity)](const sim::VertexContext& ctx) { std::fill(ctx.as<V>(0), ctx.as<V>(0) + n, x); };
  });
  linear.op.sram_write_bytes += n * vb;
  return v;
}

// scatter_mean's finish: per element of the tile's rows, 1 / count of its row (0 for an empty row);
// null for the other kinds.
std::shared_ptr<const std::vector<float>> StaticScatter::mean_scale(Range mine, const std::vector<std::int32_t>& count) const {
  if (kind != OpKind::scatter_mean) return nullptr;
  std::vector<float> s(static_cast<std::size_t>(mine.size()));
  for (std::int64_t x = mine.begin; x < mine.end; ++x) {
    const std::int32_t c = count[static_cast<std::size_t>(x / num_features)];
    s[static_cast<std::size_t>(x - mine.begin)] = c > 0 ? 1.0f / static_cast<float>(c) : 0.0f;
  }
  return std::make_shared<const std::vector<float>>(std::move(s));
}

sim::Vertex StaticScatter::fold_vertex(std::size_t o, bool finish, std::vector<Fold> list, Range mine,
                                       const std::shared_ptr<const std::vector<float>>& scale) {
  std::stable_sort(list.begin(), list.end(), [](const Fold& a, const Fold& b) { return a.dst_element < b.dst_element; });
  auto folds = std::make_shared<const std::vector<Fold>>(std::move(list));
  const std::int64_t elements = elements_of(*folds);
  linear.op.sram_read_bytes += 2 * elements * vb;
  linear.op.sram_write_bytes += elements * vb;
  sim::Vertex v;
  v.codelet = finish ? "fold partials and finish" : "fold partials";
  v.worker_cycles = fold_worker_cycles(*folds, W, costs);
  const auto finish_share = worker_shares(mine.size(), W);
  for (std::int64_t w = 0; w < W; ++w) {
    const auto i = static_cast<std::size_t>(w);
    sim::Cycles& c = v.worker_cycles[i];
    if (finish && kind == OpKind::scatter_mean) c += binary_worker_cycles(BinaryFn::multiply, finish_share[i], costs);
    if (finish && kind == OpKind::scatter_max) c += select_worker_cycles(finish_share[i], costs);
  }
  v.supervisor_cycles = costs.supervisor_cycles;
  // Buffer refs: 0 output, 1 received partials, 2 own partials (an absent one points at the output).
  const auto out_buf = linear.output[o];
  v.buffers = {{out_buf, 0}, {receive_buf[o] >= 0 ? receive_buf[o] : out_buf, 0}, {o < fold_buf.size() ? fold_buf[o] : out_buf, 0}};
  v.execute = with_value_storage(machine.value_dtype, [&](auto storage) -> sim::VertexBody {
    using V = decltype(storage);
    return [folds, kind = kind, finish, scale, n_out = mine.size()](const sim::VertexContext& ctx) {
      V* y = ctx.as<V>(0);
      const V* from[2] = {ctx.as<V>(1), ctx.as<V>(2)};
      for (const Fold& f : *folds) fold_into<V>(kind, y + f.dst_element, from[f.from] + f.src_element, f.count);
      if (!finish) return;
      if (kind == OpKind::scatter_mean) {
        for (std::int64_t j = 0; j < n_out; ++j) store(&y[j], value(y[j]) * (*scale)[static_cast<std::size_t>(j)]);
      } else if (kind == OpKind::scatter_max) {
        for (std::int64_t j = 0; j < n_out; ++j) {
          if (value(y[j]) == -std::numeric_limits<float>::infinity()) store(&y[j], 0.0f);
        }
      }
    };
  });
  return v;
}

OpProgram StaticScatter::finish() {
  for (auto& st : steps) linear.op.program.steps.push_back(std::move(st));
  append_loop_control(linear.op.program, machine);
  return std::move(linear.op);
}

}  // namespace

OpProgram build_static_scatter_program(const Op& op, const std::vector<std::int32_t>& indices, const IpuMachine& machine,
                                       bool keep_messages) {
  if (machine.value_dtype != op.dtype) {
    return build_static_scatter_program(op, indices, machine_for_op_dtype(machine, op), keep_messages);
  }
  if (static_cast<std::int64_t>(indices.size()) != op.shape.num_inputs) {
    throw std::logic_error("static scatter: index count differs from num_inputs");
  }
  StaticScatter scatter(op, indices, machine, keep_messages);
  if (keep_messages) scatter.add_fold_copies();
  scatter.combine_messages();
  scatter.assign_rounds(scatter.receive_budgets());
  scatter.add_steps();
  scatter.route_partials();
  scatter.add_combine_vertices();
  std::vector<std::int32_t> count(static_cast<std::size_t>(op.shape.num_outputs), 0);
  for (std::int32_t d : indices) ++count[static_cast<std::size_t>(d)];
  for (std::size_t o = 0; o < static_cast<std::size_t>(scatter.output.tiles_used); ++o) scatter.add_owner_vertices(o, count);
  return scatter.finish();
}

}  // namespace tilesim::ipu
