// The scatter family (PyG scatter with reduce 'sum', 'mean', 'max', and utils.degree) as a BSP program,
// following the plan's split. scatter_add is the template; the others change only what a vertex does:
//   scatter_mean: the update also counts each row's messages (a second 1-element MultiUpdateAdd pass),
//               the counts are reduced with the sums, and the last compute divides by max(count, 1);
//   scatter_max:  partials start at -inf, the update and the reduction take the max, and the last
//               compute turns rows that received nothing into 0 (as torch_scatter / PyG do);
//   degree_count: no messages: the update adds 1 per offset into a 1-wide output.
// The steps (for every kind):
//   zero + distribute: every tile zeroes its partial output block; each index group's indices go to
//               its S x H tiles and its messages (columns of block h) to the S tiles that need them;
//   update:     every tile runs MultiUpdateAdd: its workers each own a slice of the block's rows, scan
//               all of the group's offsets and add the messages that land in their rows;
//   reduce (I > 1 only): the I partial outputs of each block are exchanged in row chunks, and chunk k
//               is summed on the tile of group k.
// Each step below builds one of these parts.
#include <algorithm>
#include <cstring>
#include <limits>

#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/programs/value_storage.hpp"
#include "models/ipu/planning/blocks.hpp"
#include "models/ipu/programs/block_placement.hpp"
#include "models/ipu/programs/linear_buffers.hpp"
#include "models/ipu/programs/op_program.hpp"

namespace tilesim::ipu {

namespace {

// A Fill vertex setting `bytes` of a buffer to `fill_value` (values of the machine's type), the bytes split
// evenly over the workers.
void fill_vertex(sim::Vertex& fill, sim::BufferId buffer, std::int64_t bytes, const IpuMachine& machine, float fill_value = 0.0f) {
  const std::int64_t vb = machine.value_bytes();
  const std::int64_t W = machine.chip.worker_contexts;
  fill.codelet = "Fill";
  fill.supervisor_cycles = machine.codelets.supervisor_cycles;
  fill.worker_cycles.assign(static_cast<std::size_t>(W), 0);
  const std::int64_t chunk = ceil_div(bytes / vb, W) * vb;
  for (std::int64_t w = 0; w < W; ++w) {
    const Range bw = block(bytes, chunk, w);
    if (!bw.empty()) fill.worker_cycles[static_cast<std::size_t>(w)] = fill_worker_cycles(bw.size(), machine.codelets);
  }
  fill.buffers = {{buffer, 0}};
  if (fill_value == 0.0f) {
    fill.execute = [bytes](const sim::VertexContext& ctx) { std::memset(ctx.data(0), 0, static_cast<std::size_t>(bytes)); };
  } else {
    fill.execute = with_value_storage(machine.value_dtype, [&](auto storage) -> sim::VertexBody {
      using V = decltype(storage);
      return [n = bytes / vb, x = stored<V>(fill_value)](const sim::VertexContext& ctx) { std::fill(ctx.as<V>(0), ctx.as<V>(0) + n, x); };
    });
  }
}

// The vertex that ends a scatter_mean or scatter_max on the tile holding a finished block (rows x cols
// values, `counts` one per row for mean): divide by max(count, 1), or turn -inf into 0. Workers split the
// elements.
void finalise_vertex(sim::Vertex& v, OpKind kind, sim::BufferId values, sim::BufferId counts, std::int64_t rows, std::int64_t cols,
                     const IpuMachine& machine) {
  const std::int64_t W = machine.chip.worker_contexts;
  v.codelet = kind == OpKind::scatter_mean ? "ScatterMeanDivide" : "ScatterMaxFillEmpty";
  v.supervisor_cycles = machine.codelets.supervisor_cycles;
  const std::int64_t elements = rows * cols;
  v.worker_cycles = worker_split_cycles(elements, W, [&](std::int64_t n) {
    return kind == OpKind::scatter_mean ? binary_worker_cycles(BinaryFn::divide, n, machine.codelets)
                                        : select_worker_cycles(n, machine.codelets);
  });
  if (kind == OpKind::scatter_mean) {
    v.buffers = {{values, 0}, {counts, 0}};
    v.execute = with_value_storage(machine.value_dtype, [&](auto storage) -> sim::VertexBody {
      using V = decltype(storage);
      return [rows, cols](const sim::VertexContext& ctx) {
        auto* x = ctx.as<V>(0);
        const auto* n = ctx.as<const V>(1);
        for (std::int64_t r = 0; r < rows; ++r) {
          const float d = std::max(value(n[r]), 1.0f);
          for (std::int64_t c = 0; c < cols; ++c) store(&x[r * cols + c], value(x[r * cols + c]) / d);
        }
      };
    });
  } else {
    v.buffers = {{values, 0}};
    v.execute = with_value_storage(machine.value_dtype, [&](auto storage) -> sim::VertexBody {
      using V = decltype(storage);
      return [elements](const sim::VertexContext& ctx) {
        auto* x = ctx.as<V>(0);
        for (std::int64_t e = 0; e < elements; ++e)
          if (value(x[e]) == -std::numeric_limits<float>::infinity()) store(&x[e], 0.0f);
      };
    });
  }
}


// The scatter's program as its steps build it: the supersteps they add vertices and transfers to, and
// the buffers later steps read (by tile).
struct ScatterProgram {
  ScatterProgram(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& indices, const IpuMachine& machine,
                 sim::Mode mode);

  void zero_linear_base();
  void add_linear_messages();
  void add_index_group(std::int64_t i);
  void place_message_blocks(std::int64_t i, Range messages);
  void count_group_rows(Range messages);
  void add_block(std::int64_t i, std::int64_t s, std::int64_t h, std::int64_t messages);
  void zero_block(std::int64_t i, sim::TileId t, Range rows, Range cols, sim::BufferId part);
  void update_vertex(sim::Vertex& v, sim::TileId t, std::int64_t s, Range rows, std::int64_t cols, std::int64_t messages);
  void set_update_body(sim::Vertex& v, sim::TileId t, Range rows, std::int64_t cols, std::int64_t messages) const;
  void add_reduction(std::int64_t s, std::int64_t h, std::int64_t k, Range rows, Range chunk);
  void reduce_vertex(sim::Vertex& v, std::int64_t k, std::int64_t elements, sim::BufferId own, std::int64_t own_offset,
                     sim::BufferId received, sim::BufferId result);
  void count_reduce_vertex(sim::Vertex& v, std::int64_t k, Range chunk, sim::TileId owner, sim::BufferId received, sim::BufferId result);
  void move_output_to_linear_layout();
  OpProgram finish();

  const OpPlan& plan;
  const std::vector<std::int32_t>& indices;
  const IpuMachine& machine;
  const CodeletCosts& costs;
  const OpKind kind;
  const std::int64_t vb;                      // bytes per value (the op's type)
  const std::int64_t S, H, I;                 // the split: row blocks, column blocks, index groups (plan.hpp)
  const std::int64_t num_messages, num_features, out_rows;  // messages [num_messages, num_features], out [out_rows, num_features]
  const std::int64_t W;                       // worker contexts
  const TileGrid tile;
  const bool has_messages, counts, is_max, finalise;
  const float identity;                       // what the partials start from: 0 for sums and counts, -inf for the max
  const bool base_from_linear, messages_from_linear;
  const LinearLayout out_layout, messages_layout;
  OpProgram out;
  sim::Superstep zero;
  sim::Superstep update;
  sim::Superstep reduce;
  std::vector<sim::BufferId> idx_buf, src_buf, partial, count_buf;  // by tile
  std::vector<sim::BufferId> linear_base, linear_messages;          // by tile of the linear layouts
  std::vector<std::int64_t> group_row_counts;                       // count_group_rows': [row block][worker]
  std::vector<TensorPiece> group0_blocks;  // the blocks the zeroed output is exchanged into (base_from_linear)
};

std::string update_codelet(OpKind kind) {
  return kind == OpKind::scatter_max ? "MultiUpdateMax" : kind == OpKind::degree_count ? "MultiUpdateCount" : "MultiUpdateAdd";
}

ScatterProgram::ScatterProgram(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& indices,
                               const IpuMachine& machine, sim::Mode mode)
    : plan(plan),
      indices(indices),
      machine(machine),
      costs(machine.codelets),
      kind(op.kind),
      vb(machine.value_bytes()),
      S(plan.split.row_blocks),
      H(plan.split.column_blocks),
      I(plan.split.index_groups),
      num_messages(op.shape.num_inputs),
      num_features(op.shape.num_features),
      out_rows(op.shape.num_outputs),
      W(machine.chip.worker_contexts),
      tile{S, H},
      has_messages(kind != OpKind::degree_count),
      counts(kind == OpKind::scatter_mean),
      is_max(kind == OpKind::scatter_max),
      finalise(counts || is_max),
      identity(is_max ? -std::numeric_limits<float>::infinity() : 0.0f),
      base_from_linear(machine.planner.scatter_base_from_linear_layout),
      messages_from_linear(has_messages && machine.planner.scatter_messages_from_linear_layout),
      out_layout(linear_layout(out_rows * num_features, vb, machine)),
      messages_layout(linear_layout(num_messages * num_features, vb, machine)),
      zero{"zero", {"Fill", {}}, {has_messages ? "indices and messages to groups" : "indices to groups", {}}},
      update{"update", {update_codelet(kind), {}}, {"partial sums", {}}},
      reduce{"reduce", {is_max ? "ReduceMax" : "Reduce", {}}, {"none", {}}},
      idx_buf(static_cast<std::size_t>(plan.tiles_used), -1),
      src_buf(static_cast<std::size_t>(plan.tiles_used), -1),
      partial(static_cast<std::size_t>(plan.tiles_used), -1),
      count_buf(static_cast<std::size_t>(plan.tiles_used), -1) {
  require_value_dtype(op, machine);
  out.program.name = op.name;
  set_program_mode(out.program, machine, mode);
  reserve_op_buffers(out.program, plan.tiles_used, machine);
  // A vertex is a few hundred bytes (its lists inline), so each list of them is reserved once at its
  // bound (per block: a fill and a count fill, an update and a finalise; per reduced chunk: a reduce, a
  // count reduce and a finalise; plus the linear base's fills) rather than moved at every regrowth.
  const auto blocks = static_cast<std::size_t>(plan.tiles_used);
  zero.compute.vertices.reserve(2 * blocks + static_cast<std::size_t>(out_layout.tiles_used));
  update.compute.vertices.reserve(2 * blocks);
  if (I > 1) reduce.compute.vertices.reserve(3 * blocks);
}

// The zeroed output starts mapped linearly (torch.zeros), is filled there and exchanged into group 0's
// blocks; the other groups zero their own partial sums.
void ScatterProgram::zero_linear_base() {
  linear_base = add_linear_buffers(out.program, "out (linear)", out_layout, vb, nullptr);
  for (std::int64_t t = 0; t < out_layout.tiles_used; ++t) {
    const std::int64_t bytes = out_layout.tile_range(t).size() * vb;
    fill_vertex(zero.compute.add_vertex(static_cast<sim::TileId>(t)), linear_base[static_cast<std::size_t>(t)], bytes, machine, identity);
    out.sram_write_bytes += bytes;
  }
}

// Messages an earlier op wrote live in the linear layout (the layout contract between ops); each
// group's column blocks are exchanged from there to all S row-block tiles that need them.
void ScatterProgram::add_linear_messages() {
  linear_messages = add_linear_buffers(out.program, "messages (linear)", messages_layout, vb, &out.input);
}

// Index group i: its offsets and messages, then every (s, h) block of its partial output.
void ScatterProgram::add_index_group(std::int64_t i) {
  const Range mi = block(num_messages, plan.indices_per_group, i);
  count_group_rows(mi);
  add_group_indices(out.program, zero.exchange, tile, i, mi.begin, mi.size(), idx_buf, out.indices);
  if (has_messages) place_message_blocks(i, mi);
  for (std::int64_t s = 0; s < S; ++s) {
    for (std::int64_t h = 0; h < H; ++h) add_block(i, s, h, mi.size());
  }
}

// The group's offsets counted per row block and, within it, per worker's slice of the block's rows
// (update_vertex's split): each MultiUpdateAdd worker's in-range count, found in one pass (sorting the
// offsets for a binary search per worker was most of this step's time). An offset outside the output
// is in no slice. Kept in group_row_counts, its heap block reused from group to group.
void ScatterProgram::count_group_rows(Range messages) {
  group_row_counts.assign(static_cast<std::size_t>(S * W), 0);
  const FixedDivisor block_of(plan.rows_per_block);
  const Range last = block(out_rows, plan.rows_per_block, S - 1);
  const FixedDivisor worker_of_full(ceil_div(plan.rows_per_block, W)), worker_of_last(ceil_div(last.size(), W));
  for (std::int64_t m = messages.begin; m < messages.end; ++m) {
    const std::int64_t row = indices[static_cast<std::size_t>(m)];
    if (row < 0 || row >= out_rows) continue;
    const std::int64_t s = block_of(row);
    const std::int64_t local = row - s * plan.rows_per_block;
    const std::int64_t w = s == S - 1 ? worker_of_last(local) : worker_of_full(local);
    ++group_row_counts[static_cast<std::size_t>(s * W + w)];
  }
}

// Messages: columns of block h live on tile (i, 0, h) and are broadcast over the row blocks.
void ScatterProgram::place_message_blocks(std::int64_t i, Range messages) {
  BlockSource source{num_features, vb};
  if (messages_from_linear) source = {num_features, vb, &messages_layout, &linear_messages};
  for (std::int64_t h = 0; h < H; ++h) {
    std::vector<sim::TileId> copy_tiles;
    copy_tiles.reserve(static_cast<std::size_t>(S));
    for (std::int64_t s = 1; s < S; ++s) copy_tiles.push_back(tile(i, s, h));
    place_block(out.program, zero.exchange, out.input, "messages", messages, block(num_features, plan.columns_per_block, h), tile(i, 0, h),
                copy_tiles, source, src_buf);
  }
}

// Block (s, h) of group i's partial output: zeroed, updated with the group's messages and, when the
// group is the only one, finished (mean, max) in place.
void ScatterProgram::add_block(std::int64_t i, std::int64_t s, std::int64_t h, std::int64_t messages) {
  const Range rs = block(out_rows, plan.rows_per_block, s);
  const Range ch = block(num_features, plan.columns_per_block, h);
  const auto t = tile(i, s, h);
  const auto part = out.program.add_buffer(I == 1 ? "out" : "partial sums", t, rs.size() * ch.size() * vb);
  partial[static_cast<std::size_t>(t)] = part;
  if (I == 1) out.output.push_back({part, rs.begin, rs.size(), ch.begin, ch.size()});
  zero_block(i, t, rs, ch, part);
  update_vertex(update.compute.add_vertex(t), t, s, rs, ch.size(), messages);
  if (finalise && I == 1) {
    const std::int64_t part_bytes = rs.size() * ch.size() * vb;
    finalise_vertex(update.compute.add_vertex(t), kind, part, counts ? count_buf[static_cast<std::size_t>(t)] : -1, rs.size(),
                    ch.size(), machine);
    out.sram_read_bytes += part_bytes + (counts ? rs.size() * vb : 0);
    out.sram_write_bytes += part_bytes;
  }
}

// The block starts at the identity: filled on its tile, or (group 0, base_from_linear) received from
// the zeroed linear output. A scatter_mean's counts start at 0 beside it.
void ScatterProgram::zero_block(std::int64_t i, sim::TileId t, Range rows, Range cols, sim::BufferId part) {
  const std::int64_t part_bytes = rows.size() * cols.size() * vb;
  if (base_from_linear && i == 0) {
    group0_blocks.push_back({part, rows.begin, rows.size(), cols.begin, cols.size()});
  } else {
    fill_vertex(zero.compute.add_vertex(t), part, part_bytes, machine, identity);
    out.sram_write_bytes += part_bytes;
  }
  if (!counts) return;
  const auto cnt = out.program.add_buffer(I == 1 ? "counts" : "partial counts", t, rows.size() * vb);
  count_buf[static_cast<std::size_t>(t)] = cnt;
  fill_vertex(zero.compute.add_vertex(t), cnt, rows.size() * vb, machine);
  out.sram_write_bytes += rows.size() * vb;
}

// MultiUpdateAdd (or Max, Count) on tile t: its workers each own a slice of the block's rows, scan all
// of the group's `messages` offsets and update the rows they own (scatter_mean: a second 1-element pass
// counts them).
void ScatterProgram::update_vertex(sim::Vertex& v, sim::TileId t, std::int64_t s, Range rows, std::int64_t cols, std::int64_t messages) {
  v.codelet = update_codelet(kind);
  v.supervisor_cycles = costs.supervisor_cycles;
  v.worker_cycles.assign(static_cast<std::size_t>(W), 0);
  const std::int64_t rows_per_worker = ceil_div(rows.size(), W);
  std::int64_t in_total = 0, active_workers = 0;
  for (std::int64_t w = 0; w < W; ++w) {
    const Range rw = block(rows.size(), rows_per_worker, w);
    if (rw.empty()) continue;
    const std::int64_t in = group_row_counts[static_cast<std::size_t>(s * W + w)];
    sim::Cycles c = multiupdateadd_worker_cycles(in, messages - in, cols, costs);
    if (counts) c += multiupdateadd_worker_cycles(in, messages - in, 1, costs);
    v.worker_cycles[static_cast<std::size_t>(w)] = c;
    in_total += in;
    ++active_workers;
  }
  out.sram_read_bytes += active_workers * messages * kIndexBytes + in_total * cols * (has_messages ? 2 : 1) * vb;
  out.sram_write_bytes += in_total * cols * vb;
  if (counts) {
    out.sram_read_bytes += active_workers * messages * kIndexBytes + in_total * vb;
    out.sram_write_bytes += in_total * vb;
  }
  set_update_body(v, t, rows, cols, messages);
}

void ScatterProgram::set_update_body(sim::Vertex& v, sim::TileId t, Range rows, std::int64_t cols, std::int64_t messages) const {
  const auto at = static_cast<std::size_t>(t);
  const std::int64_t n = messages, row_begin = rows.begin, row_count = rows.size();
  if (kind == OpKind::degree_count) {
    v.buffers = {{idx_buf[at], 0}, {partial[at], 0}};
    if (out.program.timing_only) return;
    v.execute = with_value_storage(machine.value_dtype, [&](auto storage) -> sim::VertexBody {
      using V = decltype(storage);
      return [n, row_begin, row_count](const sim::VertexContext& ctx) {
        const auto* idx = ctx.as<const std::int32_t>(0);
        auto* dst = ctx.as<V>(1);
        for (std::int64_t j = 0; j < n; ++j) {
          const std::int64_t r = idx[j] - row_begin;
          if (r >= 0 && r < row_count) store(&dst[r], value(dst[r]) + 1.0f);
        }
      };
    });
    return;
  }
  v.buffers = {{idx_buf[at], 0}, {src_buf[at], 0}, {partial[at], 0}};
  if (counts) v.buffers.push_back({count_buf[at], 0});
  if (out.program.timing_only) return;
  // Each addition is stored at the value type (a float16 partial rounds per message, as the half
  // MultiUpdateAdd codelet adds in half).
  v.execute = with_value_storage(machine.value_dtype, [&](auto storage) -> sim::VertexBody {
    using V = decltype(storage);
    return [n, row_begin, row_count, cols, is_max = is_max, counts = counts](const sim::VertexContext& ctx) {
      const auto* idx = ctx.as<const std::int32_t>(0);
      const auto* src = ctx.as<const V>(1);
      auto* dst = ctx.as<V>(2);
      V* cnt = counts ? ctx.as<V>(3) : nullptr;
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int64_t r = idx[j] - row_begin;
        if (r < 0 || r >= row_count) continue;
        V* d = dst + r * cols;
        const V* x = src + j * cols;
        if constexpr (std::is_same_v<V, float>) {
          if (is_max) {
            for (std::int64_t c = 0; c < cols; ++c) d[c] = std::max(d[c], x[c]);
          } else {
            for (std::int64_t c = 0; c < cols; ++c) d[c] += x[c];
          }
        } else {
          for (std::int64_t c = 0; c < cols; ++c)
            store(&d[c], is_max ? std::max(value(d[c]), value(x[c])) : value(d[c]) + value(x[c]));
        }
        if (cnt) store(&cnt[r], value(cnt[r]) + 1.0f);
      }
    };
  });
}

// I > 1: row chunk k (`chunk`, within the block's rows) of block (s, h) is summed (or maxed) on tile
// (k, s, h) from the I groups' partials, in group order, and finished there (mean, max).
void ScatterProgram::add_reduction(std::int64_t s, std::int64_t h, std::int64_t k, Range rows, Range chunk) {
  const Range ch = block(num_features, plan.columns_per_block, h);
  const std::int64_t cols = ch.size();
  const auto owner = tile(k, s, h);
  const std::int64_t piece_bytes = chunk.size() * cols * vb;
  const std::int64_t count_bytes = chunk.size() * vb;
  const auto received = out.program.add_buffer("received partial sums", owner, (I - 1) * piece_bytes);
  const auto received_counts = counts ? out.program.add_buffer("received partial counts", owner, (I - 1) * count_bytes) : -1;
  for (std::int64_t i = 0; i < I; ++i) {
    if (i == k) continue;
    const std::int64_t slot = i < k ? i : i - 1;
    const auto from = static_cast<std::size_t>(tile(i, s, h));
    add_transfer(out.program, update.exchange, {partial[from], chunk.begin * cols * vb}, piece_bytes, {received, slot * piece_bytes});
    if (counts) {
      add_transfer(out.program, update.exchange, {count_buf[from], chunk.begin * vb}, count_bytes,
                   {received_counts, slot * count_bytes});
    }
  }
  const auto result = out.program.add_buffer("out", owner, piece_bytes);
  out.output.push_back({result, rows.begin + chunk.begin, chunk.size(), ch.begin, cols});
  reduce_vertex(reduce.compute.add_vertex(owner), k, chunk.size() * cols, partial[static_cast<std::size_t>(owner)], chunk.begin * cols * vb,
                received, result);
  sim::BufferId total_counts = -1;
  if (counts) {
    // The counts of the chunk, summed like the values (a 1-wide Reduce).
    total_counts = out.program.add_buffer("counts", owner, count_bytes);
    count_reduce_vertex(reduce.compute.add_vertex(owner), k, chunk, owner, received_counts, total_counts);
  }
  if (finalise) {
    finalise_vertex(reduce.compute.add_vertex(owner), kind, result, total_counts, chunk.size(), cols, machine);
    out.sram_read_bytes += piece_bytes + (counts ? count_bytes : 0);
    out.sram_write_bytes += piece_bytes;
  }
}

// The sum (or max) of the owner's partial and the I - 1 received ones, `elements` each.
void ScatterProgram::reduce_vertex(sim::Vertex& v, std::int64_t k, std::int64_t elements, sim::BufferId own, std::int64_t own_offset,
                                   sim::BufferId received, sim::BufferId result) {
  v.codelet = is_max ? "ReduceMax" : "Reduce";
  v.supervisor_cycles = costs.supervisor_cycles;
  v.worker_cycles = worker_split_cycles(elements, W, [&](std::int64_t n) { return reduce_worker_cycles(n, I, costs); });
  out.sram_read_bytes += I * elements * vb;
  out.sram_write_bytes += elements * vb;
  v.buffers = {{own, own_offset}, {received, 0}, {result, 0}};
  if (out.program.timing_only) return;
  v.execute = with_value_storage(machine.value_dtype, [&](auto storage) -> sim::VertexBody {
    using V = decltype(storage);
    return [elements, k, I = I, is_max = is_max](const sim::VertexContext& ctx) {
      const auto* mine = ctx.as<const V>(0);
      const auto* recv = ctx.as<const V>(1);
      auto* dst = ctx.as<V>(2);
      for (std::int64_t e = 0; e < elements; ++e) {
        float acc = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
        for (std::int64_t i = 0; i < I; ++i) {
          const float x = value(i == k ? mine[e] : recv[(i < k ? i : i - 1) * elements + e]);
          acc = is_max ? std::max(acc, x) : acc + x;
        }
        store(&dst[e], acc);
      }
    };
  });
}

// A scatter_mean's counts of the chunk, summed over the I groups.
void ScatterProgram::count_reduce_vertex(sim::Vertex& v, std::int64_t k, Range chunk, sim::TileId owner, sim::BufferId received,
                                         sim::BufferId result) {
  v.codelet = "Reduce";
  v.supervisor_cycles = costs.supervisor_cycles;
  v.worker_cycles = worker_split_cycles(chunk.size(), W, [&](std::int64_t n) { return reduce_worker_cycles(n, I, costs); });
  out.sram_read_bytes += I * chunk.size() * vb;
  out.sram_write_bytes += chunk.size() * vb;
  v.buffers = {{count_buf[static_cast<std::size_t>(owner)], chunk.begin * vb}, {received, 0}, {result, 0}};
  if (out.program.timing_only) return;
  v.execute = with_value_storage(machine.value_dtype, [&](auto storage) -> sim::VertexBody {
    using V = decltype(storage);
    return [rows = chunk.size(), k, I = I](const sim::VertexContext& ctx) {
      const auto* mine = ctx.as<const V>(0);
      const auto* recv = ctx.as<const V>(1);
      auto* dst = ctx.as<V>(2);
      for (std::int64_t r = 0; r < rows; ++r) {
        float acc = 0.0f;
        for (std::int64_t i = 0; i < I; ++i) acc += value(i == k ? mine[r] : recv[(i < k ? i : i - 1) * rows + r]);
        store(&dst[r], acc);
      }
    };
  });
}

// The last exchange moves the sums back to the linear layout (into the base they started from).
void ScatterProgram::move_output_to_linear_layout() {
  sim::Superstep& last = I > 1 ? reduce : update;
  std::vector<TensorPiece> linear_pieces;
  const auto linear = base_from_linear ? linear_base : add_linear_buffers(out.program, "out (linear)", out_layout, vb, nullptr);
  for (std::int64_t t = 0; t < out_layout.tiles_used; ++t) {
    const Range r = out_layout.tile_range(t);
    linear_pieces.push_back({linear[static_cast<std::size_t>(t)], r.begin, r.size(), 0, 1});
  }
  last.exchange.name = "output to linear layout";
  add_linear_transfers(out.program, last.exchange, out.output, num_features, out_layout, linear, vb, /*to_linear=*/true);
  out.output = std::move(linear_pieces);
  out.output_width = 1;
}

OpProgram ScatterProgram::finish() {
  if (base_from_linear) {
    add_linear_transfers(out.program, zero.exchange, group0_blocks, num_features, out_layout, linear_base, vb, /*to_linear=*/false);
  }
  out.input_width = messages_from_linear ? 1 : num_features;
  out.output_width = num_features;
  if (machine.planner.outputs_to_linear_layout) move_output_to_linear_layout();
  out.program.steps.push_back(std::move(zero));
  out.program.steps.push_back(std::move(update));
  if (I > 1) out.program.steps.push_back(std::move(reduce));
  append_loop_control(out.program, machine);
  return std::move(out);
}

}  // namespace

OpProgram build_scatter_add_program(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& indices,
                                    const IpuMachine& machine, sim::Mode mode) {
  ScatterProgram scatter(op, plan, indices, machine, mode);
  if (scatter.base_from_linear) scatter.zero_linear_base();
  if (scatter.messages_from_linear) scatter.add_linear_messages();
  for (std::int64_t i = 0; i < scatter.I; ++i) scatter.add_index_group(i);
  if (scatter.I > 1) {
    for (std::int64_t s = 0; s < scatter.S; ++s) {
      const Range rs = block(scatter.out_rows, plan.rows_per_block, s);
      const std::int64_t chunk = ceil_div(rs.size(), scatter.I);
      for (std::int64_t h = 0; h < scatter.H; ++h) {
        for (std::int64_t k = 0; k < scatter.I; ++k) {
          const Range kk = block(rs.size(), chunk, k);
          if (!kk.empty()) scatter.add_reduction(s, h, k, rs, kk);
        }
      }
    }
  }
  return scatter.finish();
}

}  // namespace tilesim::ipu
