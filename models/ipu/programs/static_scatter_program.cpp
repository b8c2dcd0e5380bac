// Gather and the scatter family with indices known when the program is compiled (a model's graph
// edges), as BSP programs whose exchanges are compiled from the indices themselves (static_index.hpp).
//
// gather:   table and output are both in the linear layout. Every output row's bytes go straight from
//           the tile holding the table row into the output row: one transfer per (table row, run of
//           columns), multicast to every output row that looks it up; rows whose output is on the same
//           tile are copied there by a vertex instead. One superstep.
// scatter_add, scatter_mean, scatter_max: messages and output are in the linear layout.
//   combine: each tile folds, in place, the messages it holds for the same destination row into one
//            partial (the messages are dead once scattered, so no extra memory);
//   exchange: the partials travel to the tiles owning their destination rows, in rounds sized to the
//            SRAM each owner has left (a tile owning hub rows receives the most, in the most rounds);
//   fold:    each owner folds what arrived into its output rows, filled beforehand with the identity;
//            at the end scatter_mean multiplies by the reciprocal of each row's count (known when
//            compiled) and scatter_max turns rows that received nothing from -inf to 0.
#include "models/ipu/programs/static_index_program.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>

#include "common/error.hpp"
#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/planning/blocks.hpp"
#include "models/ipu/programs/linear_buffers.hpp"

namespace tilesim::ipu {

namespace {

// A run of one row's columns that lies on one tile of each of two linear layouts: columns
// [col, col + count) of source row `src_row` (layout `from`) and of destination row `dst_row` (layout `to`).
struct RowRun {
  std::int64_t col = 0, count = 0;
  std::int64_t src_tile = 0, src_element = 0;  // element offset within the source tile's buffer
  std::int64_t dst_tile = 0, dst_element = 0;
};

// Cuts columns [col_begin, col_end) of a row at the tile boundaries of both layouts.
template <class Fn>
void for_each_run(const LinearLayout& from, std::int64_t src_row, const LinearLayout& to, std::int64_t dst_row,
                  std::int64_t width, std::int64_t col_begin, std::int64_t col_end, Fn&& fn) {
  std::int64_t c = col_begin;
  while (c < col_end) {
    const std::int64_t sf = src_row * width + c, df = dst_row * width + c;
    const std::int64_t ts = sf / from.elements_per_tile, td = df / to.elements_per_tile;
    const Range rs = from.tile_range(ts), rd = to.tile_range(td);
    const std::int64_t n = std::min({col_end - c, rs.end - sf, rd.end - df});
    fn(RowRun{c, n, ts, sf - rs.begin, td, df - rd.begin});
    c += n;
  }
}

// Each worker's share of `items` in contiguous blocks (0 for an idle worker).
std::vector<std::int64_t> worker_shares(std::int64_t items, std::int64_t workers) {
  return worker_split_cycles(items, workers, [](std::int64_t n) { return n; });
}

struct LocalCopy {
  std::int64_t src_byte = 0, dst_byte = 0, bytes = 0;
};

// A program whose one input and output are float32 tensors in the linear layout (flat pieces).
struct LinearProgram {
  OpProgram op;
  std::vector<sim::BufferId> input, output;  // by tile
};
LinearProgram linear_program(const Op& op, const std::string& input_name, const LinearLayout& input,
                             const LinearLayout& output) {
  LinearProgram p;
  p.op.program.name = op.name;
  p.input = add_linear_buffers(p.op.program, input_name + " (linear)", input, kValueBytes, &p.op.input);
  p.output = add_linear_buffers(p.op.program, "output (linear)", output, kValueBytes, &p.op.output);
  p.op.input_width = 1;
  p.op.output_width = 1;
  return p;
}

}  // namespace

OpProgram build_static_gather_program(const Op& op, const std::vector<std::int32_t>& indices, const IpuMachine& machine) {
  const std::int64_t R = op.shape.num_inputs, F = op.shape.num_features, N = op.shape.num_outputs;
  if (static_cast<std::int64_t>(indices.size()) != N) throw std::logic_error("static gather: index count differs from num_outputs");
  const std::int64_t W = machine.chip.worker_contexts;
  const LinearLayout table = linear_layout(R * F, kValueBytes, machine), output = linear_layout(N * F, kValueBytes, machine);

  LinearProgram linear = linear_program(op, "table", table, output);
  OpProgram& out = linear.op;
  sim::Program& prog = out.program;
  const auto& table_buf = linear.input;
  const auto& out_buf = linear.output;

  // The lookups of each table row (counting sort), so each row's runs are multicast once.
  std::vector<std::int64_t> begin(static_cast<std::size_t>(R) + 1, 0);
  for (std::int32_t r : indices) ++begin[static_cast<std::size_t>(r) + 1];
  for (std::size_t r = 1; r < begin.size(); ++r) begin[r] += begin[r - 1];
  std::vector<std::int64_t> lookups(indices.size());
  {
    std::vector<std::int64_t> next(begin.begin(), begin.end() - 1);
    for (std::int64_t e = 0; e < N; ++e) lookups[static_cast<std::size_t>(next[static_cast<std::size_t>(indices[static_cast<std::size_t>(e)])]++)] = e;
  }

  sim::Superstep step{"static gather", {"copy local rows", {}}, {"rows to their lookups", {}}};
  std::vector<std::vector<LocalCopy>> local(static_cast<std::size_t>(output.tiles_used));
  struct Open {
    std::int64_t col, count;
    std::size_t transfer;
  };
  std::vector<Open> open;
  for (std::int64_t r = 0; r < R; ++r) {
    open.clear();
    for (std::int64_t k = begin[static_cast<std::size_t>(r)]; k < begin[static_cast<std::size_t>(r) + 1]; ++k) {
      const std::int64_t e = lookups[static_cast<std::size_t>(k)];
      for_each_run(table, r, output, e, F, 0, F, [&](const RowRun& run) {
        const sim::BufferRef dst{out_buf[static_cast<std::size_t>(run.dst_tile)], run.dst_element * kValueBytes};
        if (run.src_tile == run.dst_tile) {
          local[static_cast<std::size_t>(run.dst_tile)].push_back({run.src_element * kValueBytes, dst.offset_bytes, run.count * kValueBytes});
          return;
        }
        for (const Open& o : open) {
          if (o.col == run.col && o.count == run.count) {
            step.exchange.transfers[o.transfer].dst.push_back(dst);
            return;
          }
        }
        open.push_back({run.col, run.count, step.exchange.transfers.size()});
        step.exchange.transfers.push_back(
            {{table_buf[static_cast<std::size_t>(run.src_tile)], run.src_element * kValueBytes}, run.count * kValueBytes, {dst}});
      });
    }
  }

  for (std::size_t t = 0; t < local.size(); ++t) {
    if (local[t].empty()) continue;
    if (t >= table_buf.size()) throw std::logic_error("static gather: a local copy on a tile without table rows");
    auto copies = std::make_shared<const std::vector<LocalCopy>>(std::move(local[t]));
    std::int64_t bytes = 0;
    for (const auto& c : *copies) bytes += c.bytes;
    out.sram_read_bytes += bytes;
    out.sram_write_bytes += bytes;
    sim::Vertex v;
    v.codelet = "copy local rows";
    const std::int64_t n = static_cast<std::int64_t>(copies->size());
    const std::int64_t elements_per_copy = ceil_div(bytes / kValueBytes, n);
    v.worker_cycles = worker_split_cycles(n, W, [&](std::int64_t k) {
      return multislice_worker_cycles(k, 0, elements_per_copy, machine.codelets);
    });
    v.supervisor_cycles = machine.codelets.supervisor_cycles;
    v.buffers = {{table_buf[t], 0}, {out_buf[t], 0}};
    v.execute = [copies](const sim::VertexContext& ctx) {
      for (const auto& c : *copies) std::memcpy(ctx.data(1) + c.dst_byte, ctx.data(0) + c.src_byte, static_cast<std::size_t>(c.bytes));
    };
    step.compute.vertices.push_back({static_cast<sim::TileId>(t), std::move(v)});
  }
  for (const auto& tr : step.exchange.transfers) out.sram_read_bytes += tr.total_bytes();
  prog.steps.push_back(std::move(step));
  append_loop_control(prog, machine);
  return std::move(linear.op);
}


namespace {

// A run of one message row held by one tile: `count` floats at `element` of the tile's message
// buffer, columns [col, col + count) of a message for output row `row`.
struct MessageRun {
  std::int64_t tile = 0;
  std::int32_t row = 0;
  std::int64_t col = 0, count = 0, element = 0;
};

// `count` floats folded into the output at `dst_element` from `src_element` of buffer `from`
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

void fold_into(OpKind kind, float* y, const float* x, std::int64_t n) {
  if (kind == OpKind::scatter_max) {
    for (std::int64_t j = 0; j < n; ++j) y[j] = std::max(y[j], x[j]);
  } else {
    for (std::int64_t j = 0; j < n; ++j) y[j] += x[j];
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

}  // namespace

OpProgram build_static_scatter_program(const Op& op, const std::vector<std::int32_t>& indices, const IpuMachine& machine,
                                       bool keep_messages) {
  const std::int64_t M = op.shape.num_inputs, F = op.shape.num_features, R = op.shape.num_outputs;
  if (static_cast<std::int64_t>(indices.size()) != M) throw std::logic_error("static scatter: index count differs from num_inputs");
  const OpKind kind = op.kind;
  const std::int64_t W = machine.chip.worker_contexts;
  const auto& costs = machine.codelets;
  const LinearLayout messages = linear_layout(M * F, kValueBytes, machine), output = linear_layout(R * F, kValueBytes, machine);
  const auto T = static_cast<std::size_t>(machine.chip.num_tiles);
  const float identity = kind == OpKind::scatter_max ? -std::numeric_limits<float>::infinity() : 0.0f;

  LinearProgram linear = linear_program(op, "messages", messages, output);
  OpProgram& out = linear.op;
  sim::Program& prog = out.program;
  const auto& message_buf = linear.input;
  const auto& out_buf = linear.output;
  // Where the partials are folded: in the messages themselves, or in a copy of them when a later op
  // still reads the messages.
  std::vector<sim::BufferId> fold_buf = message_buf;
  if (keep_messages) {
    for (std::size_t t = 0; t < message_buf.size(); ++t) {
      fold_buf[t] = prog.add_buffer("partials (copy of the messages)", static_cast<sim::TileId>(t),
                                    messages.tile_range(static_cast<std::int64_t>(t)).size() * kValueBytes);
    }
  }
  auto own_elements = [](const LinearLayout& l, std::size_t t) {
    return t < static_cast<std::size_t>(l.tiles_used) ? l.tile_range(static_cast<std::int64_t>(t)).size() : 0;
  };

  // Combine: the message runs of one tile, destination row and columns fold into the first of them
  // (the partial), in place: the messages are dead once scattered.
  std::vector<MessageRun> runs;
  runs.reserve(static_cast<std::size_t>(M) + static_cast<std::size_t>(messages.tiles_used));
  for (std::int64_t e = 0; e < M; ++e) {
    const std::int32_t d = indices[static_cast<std::size_t>(e)];
    for_each_run(messages, e, messages, e, F, 0, F,
                 [&](const RowRun& run) { runs.push_back({run.src_tile, d, run.col, run.count, run.src_element}); });
  }
  std::sort(runs.begin(), runs.end(), [](const MessageRun& a, const MessageRun& b) {
    return std::tie(a.tile, a.row, a.col, a.count, a.element) < std::tie(b.tile, b.row, b.col, b.count, b.element);
  });
  std::vector<std::vector<Fold>> combine(T), local(T);  // combine: by message tile; local: by owner tile
  std::vector<Remote> remote;
  for (std::size_t k = 0; k < runs.size();) {
    const MessageRun& lead = runs[k];
    std::size_t j = k + 1;
    for (; j < runs.size() && runs[j].tile == lead.tile && runs[j].row == lead.row && runs[j].col == lead.col && runs[j].count == lead.count; ++j) {
      combine[static_cast<std::size_t>(lead.tile)].push_back({lead.element, runs[j].element, lead.count, 1});
    }
    for_each_run(output, lead.row, output, lead.row, F, lead.col, lead.col + lead.count, [&](const RowRun& run) {
      const std::int64_t src_element = lead.element + (run.col - lead.col);
      if (run.dst_tile == lead.tile) {
        local[static_cast<std::size_t>(run.dst_tile)].push_back({run.dst_element, src_element, run.count, 1});
      } else {
        remote.push_back({run.dst_tile, run.dst_element, lead.tile, src_element, run.count});
      }
    });
    k = j;
  }
  runs.clear();
  runs.shrink_to_fit();

  // Exchange rounds: each owner receives its partials in as few rounds as fit the SRAM its messages
  // and output leave (the planner's share of it, or failing that all of it); a tile owning rows of
  // many edges (a hub) takes the most rounds.
  std::stable_sort(remote.begin(), remote.end(), [](const Remote& a, const Remote& b) { return a.owner < b.owner; });
  std::vector<std::int64_t> budget(T, 0);
  const auto sram = machine.chip.sram_bytes_per_tile;
  const auto share = static_cast<std::int64_t>(machine.planner.memory_fraction * static_cast<double>(sram));
  for (std::size_t t = 0; t < T; ++t) {
    const std::int64_t own = (keep_messages ? 2 : 1) * sim::align_buffer_offset(own_elements(messages, t) * kValueBytes) +
                             sim::align_buffer_offset(own_elements(output, t) * kValueBytes);
    budget[t] = share - own >= F * kValueBytes ? share - own : sram - own;
    if (budget[t] < std::min<std::int64_t>(F, output.elements_per_tile) * kValueBytes) {
      throw PlanError("op \"" + op.name + "\" (" + to_string(kind) + ", indices compiled into the exchange) does not fit on machine " +
                      machine.chip.name + ": tile " + std::to_string(t) + " needs " + std::to_string(own) +
                      " bytes for its messages and output rows and room to receive a row, but a tile has " +
                      std::to_string(sram) + " bytes of SRAM; next step: " + more_ipus_next_step(machine) +
                      ", or use a smaller batch (fewer nodes or edges, or narrower features)");
    }
  }
  std::vector<std::int64_t> round_of(remote.size(), 0), offset_of(remote.size(), 0), receive_bytes(T, 0);
  std::int64_t rounds = 1;
  for (std::size_t k = 0; k < remote.size();) {
    const auto o = static_cast<std::size_t>(remote[k].owner);
    std::int64_t round = 0, used = 0;
    for (; k < remote.size() && static_cast<std::size_t>(remote[k].owner) == o; ++k) {
      const std::int64_t bytes = remote[k].count * kValueBytes;
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
  std::vector<sim::BufferId> receive_buf(T, -1);
  for (std::size_t t = 0; t < T; ++t) {
    if (receive_bytes[t] > 0) receive_buf[t] = prog.add_buffer("received partials", static_cast<sim::TileId>(t), receive_bytes[t]);
  }

  // Supersteps: 0 combines and fills the output with the identity, then sends round 0; step k folds
  // what round k - 1 brought (step 1 also the partials already on their owner) and sends round k; the
  // last step folds the last round and finishes (mean: times 1 / count; max: empty rows to 0).
  std::vector<sim::Superstep> steps(static_cast<std::size_t>(rounds) + 1);
  for (std::int64_t k = 0; k <= rounds; ++k) {
    auto& st = steps[static_cast<std::size_t>(k)];
    st.name = k == 0 ? "combine" : k == rounds ? "fold and finish" : "fold round " + std::to_string(k - 1);
    st.compute.name = k == 0 ? "combine messages" : "fold partials";
    st.exchange.name = k < rounds ? "partials to owners, round " + std::to_string(k) : "none";
  }
  std::vector<std::vector<std::vector<Fold>>> received(static_cast<std::size_t>(rounds), std::vector<std::vector<Fold>>(T));
  for (std::size_t k = 0; k < remote.size(); ++k) {
    const Remote& r = remote[k];
    const auto o = static_cast<std::size_t>(r.owner);
    steps[static_cast<std::size_t>(round_of[k])].exchange.transfers.push_back(
        {{fold_buf[static_cast<std::size_t>(r.src_tile)], r.src_element * kValueBytes}, r.count * kValueBytes, {{receive_buf[o], offset_of[k]}}});
    received[static_cast<std::size_t>(round_of[k])][o].push_back({r.dst_element, offset_of[k] / kValueBytes, r.count, 0});
  }
  remote.clear();
  remote.shrink_to_fit();

  for (std::size_t t = 0; t < static_cast<std::size_t>(messages.tiles_used); ++t) {
    auto folds = std::make_shared<const std::vector<Fold>>(std::move(combine[t]));
    std::int64_t elements = 0;
    for (const Fold& f : *folds) elements += f.count;
    out.sram_read_bytes += 2 * elements * kValueBytes;
    out.sram_write_bytes += elements * kValueBytes;
    if (folds->empty() && !keep_messages) continue;
    sim::Vertex v;
    v.codelet = keep_messages ? "copy and combine messages" : "combine messages";
    v.worker_cycles = fold_worker_cycles(*folds, W, costs);
    const std::int64_t bytes = messages.tile_range(static_cast<std::int64_t>(t)).size() * kValueBytes;
    if (keep_messages) {
      // The copy, at the fill's store rate (one 64-bit store per worker cycle).
      const auto share = worker_shares(bytes, W);
      for (std::int64_t w = 0; w < W; ++w) v.worker_cycles[static_cast<std::size_t>(w)] += fill_worker_cycles(share[static_cast<std::size_t>(w)], costs);
      out.sram_read_bytes += bytes;
      out.sram_write_bytes += bytes;
    }
    v.supervisor_cycles = costs.supervisor_cycles;
    v.buffers = {{message_buf[t], 0}, {fold_buf[t], 0}};
    v.execute = [folds, kind, keep_messages, bytes](const sim::VertexContext& ctx) {
      float* m = ctx.as<float>(1);
      if (keep_messages) std::memcpy(ctx.data(1), ctx.data(0), static_cast<std::size_t>(bytes));
      for (const Fold& f : *folds) fold_into(kind, m + f.dst_element, m + f.src_element, f.count);
    };
    steps[0].compute.vertices.push_back({static_cast<sim::TileId>(t), std::move(v)});
  }

  std::vector<std::int32_t> count(static_cast<std::size_t>(R), 0);
  for (std::int32_t d : indices) ++count[static_cast<std::size_t>(d)];
  for (std::size_t o = 0; o < static_cast<std::size_t>(output.tiles_used); ++o) {
    const Range mine = output.tile_range(static_cast<std::int64_t>(o));
    {  // fill with the identity
      sim::Vertex v;
      v.codelet = "fill";
      for (std::int64_t bytes : worker_shares(mine.size() * kValueBytes, W)) v.worker_cycles.push_back(fill_worker_cycles(bytes, costs));
      v.supervisor_cycles = costs.supervisor_cycles;
      v.buffers = {{out_buf[o], 0}};
      const std::int64_t n = mine.size();
      v.execute = [n, identity](const sim::VertexContext& ctx) { std::fill(ctx.as<float>(0), ctx.as<float>(0) + n, identity); };
      out.sram_write_bytes += n * kValueBytes;
      steps[0].compute.vertices.push_back({static_cast<sim::TileId>(o), std::move(v)});
    }
    // The finish: per element, 1 / count of its row (mean) or nothing (add; max replaces -inf by 0).
    std::shared_ptr<const std::vector<float>> scale;
    if (kind == OpKind::scatter_mean) {
      std::vector<float> s(static_cast<std::size_t>(mine.size()));
      for (std::int64_t x = mine.begin; x < mine.end; ++x) {
        const std::int32_t c = count[static_cast<std::size_t>(x / F)];
        s[static_cast<std::size_t>(x - mine.begin)] = c > 0 ? 1.0f / static_cast<float>(c) : 0.0f;
      }
      scale = std::make_shared<const std::vector<float>>(std::move(s));
    }
    for (std::int64_t k = 1; k <= rounds; ++k) {
      std::vector<Fold> list = std::move(received[static_cast<std::size_t>(k - 1)][o]);
      if (k == 1) list.insert(list.end(), local[o].begin(), local[o].end());
      const bool finish = k == rounds;
      if (list.empty() && !(finish && kind != OpKind::scatter_add)) continue;
      std::stable_sort(list.begin(), list.end(), [](const Fold& a, const Fold& b) { return a.dst_element < b.dst_element; });
      auto folds = std::make_shared<const std::vector<Fold>>(std::move(list));
      std::int64_t elements = 0;
      for (const Fold& f : *folds) elements += f.count;
      out.sram_read_bytes += 2 * elements * kValueBytes;
      out.sram_write_bytes += elements * kValueBytes;
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
      v.buffers = {{out_buf[o], 0},
                   {receive_buf[o] >= 0 ? receive_buf[o] : out_buf[o], 0},
                   {o < fold_buf.size() ? fold_buf[o] : out_buf[o], 0}};
      const std::int64_t n_out = mine.size();
      v.execute = [folds, kind, finish, scale, n_out](const sim::VertexContext& ctx) {
        float* y = ctx.as<float>(0);
        const float* from[2] = {ctx.as<float>(1), ctx.as<float>(2)};
        for (const Fold& f : *folds) fold_into(kind, y + f.dst_element, from[f.from] + f.src_element, f.count);
        if (!finish) return;
        if (kind == OpKind::scatter_mean) {
          for (std::int64_t j = 0; j < n_out; ++j) y[j] *= (*scale)[static_cast<std::size_t>(j)];
        } else if (kind == OpKind::scatter_max) {
          for (std::int64_t j = 0; j < n_out; ++j) {
            if (y[j] == -std::numeric_limits<float>::infinity()) y[j] = 0.0f;
          }
        }
      };
      steps[static_cast<std::size_t>(k)].compute.vertices.push_back({static_cast<sim::TileId>(o), std::move(v)});
    }
  }
  for (auto& st : steps) prog.steps.push_back(std::move(st));
  append_loop_control(prog, machine);
  return std::move(linear.op);
}

}  // namespace tilesim::ipu
