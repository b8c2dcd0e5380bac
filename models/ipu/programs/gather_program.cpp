// The gather (PyG index_select) as a BSP program, following the plan's split:
//   distribute: each index group's indices go to its S x H tiles; with I > 1 each table block is
//               broadcast from group 0 to the other groups;
//   slice:      every tile runs MultiSlice over its group's lookups against its table block; lookups
//               whose row lives in another row block are skipped;
//   iota, index transform (S > 1 only): poplibs builds the second stage's offsets in two compute sets
//               of their own (an iota, then a map of the indices to the row block holding each lookup),
//               each a superstep; the iota's result travels to the tiles owning the lookups;
//   select (S > 1 only): the S candidate rows of each lookup are exchanged to the tile that owns it,
//               which keeps the one from the block that holds the row. The exchange is compiled, so all
//               S candidates travel, whichever is valid.
// The output stays where the last stage wrote it (poplibs creates it in the plan's layout) unless
// planner.gather_output_to_linear_layout moves it to the linear layout (a later op of a graph reads it).
// Each step below builds one of these parts.
#include <algorithm>
#include <vector>

#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/programs/value_storage.hpp"
#include "models/ipu/planning/blocks.hpp"
#include "models/ipu/programs/block_placement.hpp"
#include "models/ipu/programs/linear_buffers.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "sim/block_copy.hpp"

namespace tilesim::ipu {

namespace {

// The gather's program as its steps build it: the supersteps they add vertices and transfers to, and
// the buffers later steps read (by tile).
struct GatherProgram {
  GatherProgram(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& indices, const IpuMachine& machine,
                sim::Mode mode);

  void place_table_blocks();
  void add_index_group(std::int64_t i);
  void add_multislice(std::int64_t i, Range lookups);
  void multislice_vertex(sim::Vertex& v, const std::vector<std::int64_t>& worker_block_counts, std::int64_t s, std::int64_t lookups,
                                Range rows, std::int64_t cols, sim::TileId t, sim::BufferId dest);
  void add_iota(std::int64_t i, std::int64_t lookups, std::int64_t chunk);
  void add_selection(std::int64_t i, std::int64_t k, std::int64_t h, Range lookups, Range chunk);
  sim::BufferId receive_candidates(std::int64_t i, std::int64_t k, std::int64_t h, Range chunk, std::int64_t cols);
  sim::BufferId add_index_transform(sim::TileId owner, Range chunk);
  void add_select(sim::TileId owner, std::int64_t k, Range chunk, std::int64_t cols, sim::BufferId blocks_of,
                  sim::BufferId received, sim::BufferId result);
  void move_output_to_linear_layout();
  OpProgram finish();

  const OpPlan& plan;
  const std::vector<std::int32_t>& indices;
  const IpuMachine& machine;
  const CodeletCosts& costs;
  const std::int64_t vb;                      // bytes per value (the op's type)
  const std::int64_t S, H, I;                 // the split: row blocks, column blocks, index groups (plan.hpp)
  const std::int64_t table_rows, num_features, num_lookups;  // the table [table_rows, num_features]; out's rows
  const std::int64_t W;                       // worker contexts
  const TileGrid tile;
  const bool table_from_linear;
  OpProgram out;
  sim::Superstep distribute{"distribute", {"distribute", {}}, {"indices and table to groups", {}}};
  sim::Superstep slice{"slice", {"MultiSlice", {}}, {"none", {}}};
  sim::Superstep iota{"iota", {"Iota", {}}, {"stage-1 offsets to lookup owners", {}}};
  sim::Superstep transform{"index transform", {"IndexTransform", {}}, {"candidate rows", {}}};
  sim::Superstep select{"select", {"select candidates", {}}, {"none", {}}};
  std::vector<sim::BufferId> table_buf, index_buf, candidate_buf;  // by tile
  std::vector<std::int64_t> worker_block_counts;                   // add_multislice's: [worker][row block]
};

GatherProgram::GatherProgram(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& indices,
                             const IpuMachine& machine, sim::Mode mode)
    : plan(plan),
      indices(indices),
      machine(machine),
      costs(machine.codelets),
      vb(machine.value_bytes()),
      S(plan.split.row_blocks),
      H(plan.split.column_blocks),
      I(plan.split.index_groups),
      table_rows(op.shape.num_inputs),
      num_features(op.shape.num_features),
      num_lookups(op.shape.num_outputs),
      W(machine.chip.worker_contexts),
      tile{S, H},
      table_from_linear(machine.planner.gather_table_from_linear_layout),
      table_buf(static_cast<std::size_t>(plan.tiles_used), -1),
      index_buf(static_cast<std::size_t>(plan.tiles_used), -1),
      candidate_buf(static_cast<std::size_t>(plan.tiles_used), -1) {
  require_value_dtype(op, machine);
  out.program.name = op.name;
  set_program_mode(out.program, machine, mode);
  reserve_op_buffers(out.program, plan.tiles_used, machine);
  // A vertex is a few hundred bytes (its lists inline): each list of them reserved once at its bound
  // (a MultiSlice per block; with row blocks, up to two select vertices and an index transform per
  // group's chunk and column block) rather than moved at every regrowth.
  const auto blocks = static_cast<std::size_t>(plan.tiles_used);
  slice.compute.vertices.reserve(blocks);
  if (S > 1) {
    select.compute.vertices.reserve(2 * blocks);
    transform.compute.vertices.reserve(blocks);
  }
}

// Table blocks. With gather_table_from_linear_layout the table is a tensor mapped linearly (as an op's
// input is), and every block is exchanged from there to its tiles in all groups; otherwise it is
// resident on group 0 in the plan's layout and broadcast to the other groups.
void GatherProgram::place_table_blocks() {
  const LinearLayout table_layout = linear_layout(table_rows * num_features, vb, machine);
  std::vector<sim::BufferId> linear_table;
  BlockSource source{num_features, vb};
  if (table_from_linear) {
    linear_table = add_linear_buffers(out.program, "table (linear)", table_layout, vb, &out.input);
    source = {num_features, vb, &table_layout, &linear_table};
  }
  for (std::int64_t s = 0; s < S; ++s) {
    for (std::int64_t h = 0; h < H; ++h) {
      std::vector<sim::TileId> copy_tiles;
      copy_tiles.reserve(static_cast<std::size_t>(I));
      for (std::int64_t i = 1; i < I; ++i) copy_tiles.push_back(tile(i, s, h));
      place_block(out.program, distribute.exchange, out.input, "table", block(table_rows, plan.rows_per_block, s),
                  block(num_features, plan.columns_per_block, h), tile(0, s, h), copy_tiles, source, table_buf);
    }
  }
}

// Index group i: its indices, its MultiSlice and, with S > 1, its second stage, where lookup chunk k
// of the group is owned by tile (i, k, h), which receives the candidates of the other S - 1 row
// blocks and keeps the valid one.
void GatherProgram::add_index_group(std::int64_t i) {
  const Range lookups = block(num_lookups, plan.indices_per_group, i);
  // The group's indices live on its first tile and are broadcast to the rest of the group.
  add_group_indices(out.program, distribute.exchange, tile, i, lookups.begin, lookups.size(), index_buf, out.indices);
  add_multislice(i, lookups);
  if (S == 1) return;
  const std::int64_t chunk = ceil_div(lookups.size(), S);
  add_iota(i, lookups.size(), chunk);
  for (std::int64_t k = 0; k < S; ++k) {
    const Range kk = block(lookups.size(), chunk, k);
    if (kk.empty()) continue;
    for (std::int64_t h = 0; h < H; ++h) add_selection(i, k, h, lookups, kk);
  }
}

// Stage 0: MultiSlice on every tile of group i, into the output (S = 1) or the candidates; workers
// split the lookups. Each worker's lookups are counted per row block in one pass (no sort: sorting
// them for a binary search per block was most of this function's time).
void GatherProgram::add_multislice(std::int64_t i, Range lookups) {
  const std::int64_t ni = lookups.size();
  const std::int64_t per_worker = ceil_div(ni, W);
  // Each worker's lookups counted per row block (an index's block is its row / rows_per_block; one
  // out of the table is in none): what each MultiSlice vertex's worker finds in range. Kept between
  // groups, its heap block reused: a large gather has hundreds of groups.
  auto& counts = worker_block_counts;
  counts.assign(static_cast<std::size_t>(W * S), 0);
  const FixedDivisor block_of(plan.rows_per_block);
  for (std::int64_t w = 0; w < W; ++w) {
    const Range rw = block(ni, per_worker, w);
    std::int64_t* worker_counts = counts.data() + w * S;
    for (std::int64_t j = lookups.begin + rw.begin; j < lookups.begin + rw.end; ++j) {
      const std::int64_t row = indices[static_cast<std::size_t>(j)];
      if (row >= 0 && row < table_rows) ++worker_counts[block_of(row)];
    }
  }
  const auto dest_name = out.program.buffer_name(S == 1 ? "out" : "candidates");
  for (std::int64_t s = 0; s < S; ++s) {
    const Range rs = block(table_rows, plan.rows_per_block, s);
    for (std::int64_t h = 0; h < H; ++h) {
      const Range ch = block(num_features, plan.columns_per_block, h);
      const auto t = tile(i, s, h);
      const auto dest = out.program.add_buffer(dest_name, t, ni * ch.size() * vb);
      candidate_buf[static_cast<std::size_t>(t)] = dest;
      if (S == 1) out.output.push_back({dest, lookups.begin, ni, ch.begin, ch.size()});
      multislice_vertex(slice.compute.add_vertex(t), counts, s, ni, rs, ch.size(), t, dest);
    }
  }
}

void GatherProgram::multislice_vertex(sim::Vertex& v, const std::vector<std::int64_t>& worker_block_counts, std::int64_t s,
                                             std::int64_t lookups, Range rows, std::int64_t cols, sim::TileId t, sim::BufferId dest) {
  const std::int64_t per_worker = ceil_div(lookups, W);
  v.codelet = "MultiSlice";
  v.supervisor_cycles = costs.supervisor_cycles;
  v.worker_cycles.assign(static_cast<std::size_t>(W), 0);
  std::int64_t in_total = 0;
  for (std::int64_t w = 0; w < W; ++w) {
    const Range rw = block(lookups, per_worker, w);
    if (rw.empty()) continue;
    const std::int64_t in = worker_block_counts[static_cast<std::size_t>(w * S + s)];
    v.worker_cycles[static_cast<std::size_t>(w)] = multislice_worker_cycles(in, rw.size() - in, cols, costs);
    in_total += in;
  }
  out.sram_read_bytes += lookups * kIndexBytes + in_total * cols * vb;
  out.sram_write_bytes += in_total * cols * vb;
  v.buffers = {{index_buf[static_cast<std::size_t>(t)], 0}, {table_buf[static_cast<std::size_t>(t)], 0}, {dest, 0}};
  if (out.program.timing_only) return;  // a program only timed runs no vertex body (sim::Program::timing_only)
  // Rows move as bytes, whatever the value type. A column block's rows are a few dozen bytes, so they
  // are moved inline (sim::move_bytes): a library call, or a loop over values, costs more than its bytes.
  v.execute = [lookups, row_begin = rows.begin, row_count = rows.size(),
               row_bytes = cols * vb](const sim::VertexContext& ctx) {
    const auto* idx = ctx.as<const std::int32_t>(0);
    const std::byte* slab = ctx.data(1);
    std::byte* dst = ctx.data(2);
    for (std::int64_t j = 0; j < lookups; ++j) {
      const std::int64_t r = idx[j] - row_begin;
      if (r < 0 || r >= row_count) continue;
      sim::move_bytes(dst + j * row_bytes, slab + r * row_bytes, static_cast<std::size_t>(row_bytes));
    }
  };
}

// The iota of the stage-1 offsets, on group i's index tile, sent to every owner of a lookup chunk.
void GatherProgram::add_iota(std::int64_t i, std::int64_t lookups, std::int64_t chunk) {
  const auto index_tile = tile(i, 0, 0);
  const auto offsets = out.program.add_buffer("stage-1 offsets (iota)", index_tile, chunk * kIndexBytes);
  sim::Vertex& v = iota.compute.add_vertex(index_tile);
  v.codelet = "Iota";
  v.supervisor_cycles = costs.supervisor_cycles;
  v.worker_cycles = worker_split_cycles(chunk, W, [&](std::int64_t n) { return index_transform_worker_cycles(n, costs); });
  out.sram_write_bytes += chunk * kIndexBytes;
  v.buffers = {{offsets, 0}};
  v.execute = [chunk](const sim::VertexContext& ctx) {
    auto* o = ctx.as<std::int32_t>(0);
    for (std::int64_t j = 0; j < chunk; ++j) o[j] = static_cast<std::int32_t>(j);
  };
  sim::Transfer to_owners{{offsets, 0}, chunk * kIndexBytes, {}};
  for (std::int64_t k = 0; k < S; ++k) {
    if (block(lookups, chunk, k).empty()) continue;
    for (std::int64_t h = 0; h < H; ++h) {
      const auto owner = tile(i, k, h);
      if (owner != index_tile) to_owners.dst.push_back({out.program.add_buffer("stage-1 offsets", owner, chunk * kIndexBytes), 0});
    }
  }
  if (!to_owners.dst.empty()) iota.exchange.transfers.push_back(std::move(to_owners));
}

// Stage 1 for lookup chunk `chunk` (k) of group i, columns h, on its owner tile (i, k, h): the other row
// blocks' candidates arrive, the chunk's indices are transformed (which row block holds each lookup: an
// elementwise integer op over the chunk), and the select vertex keeps the valid candidate.
void GatherProgram::add_selection(std::int64_t i, std::int64_t k, std::int64_t h, Range lookups, Range chunk) {
  const Range ch = block(num_features, plan.columns_per_block, h);
  const auto owner = tile(i, k, h);
  const auto received = receive_candidates(i, k, h, chunk, ch.size());
  const auto result = out.program.add_buffer("out", owner, chunk.size() * ch.size() * vb);
  out.output.push_back({result, lookups.begin + chunk.begin, chunk.size(), ch.begin, ch.size()});
  const auto blocks_of = add_index_transform(owner, chunk);
  add_select(owner, k, chunk, ch.size(), blocks_of, received, result);
}

// The chunk's candidate rows from the group's other S - 1 row blocks, into one buffer on the owner
// (slot by row block, the owner's own block skipped).
sim::BufferId GatherProgram::receive_candidates(std::int64_t i, std::int64_t k, std::int64_t h, Range chunk, std::int64_t cols) {
  const std::int64_t piece_bytes = chunk.size() * cols * vb;
  const auto received = out.program.add_buffer("received candidates", tile(i, k, h), (S - 1) * piece_bytes);
  for (std::int64_t s = 0; s < S; ++s) {
    if (s == k) continue;
    const std::int64_t slot = s < k ? s : s - 1;
    add_transfer(out.program, transform.exchange, {candidate_buf[static_cast<std::size_t>(tile(i, s, h))], chunk.begin * cols * vb},
                 piece_bytes, {received, slot * piece_bytes});
  }
  return received;
}

// Which row block holds each lookup of the chunk, from the owner's copy of the group's indices.
sim::BufferId GatherProgram::add_index_transform(sim::TileId owner, Range chunk) {
  const auto blocks_of = out.program.add_buffer("candidate blocks", owner, chunk.size() * kIndexBytes);
  sim::Vertex& v = transform.compute.add_vertex(owner);
  v.codelet = "IndexTransform";
  v.supervisor_cycles = costs.supervisor_cycles;
  v.worker_cycles = worker_split_cycles(chunk.size(), W, [&](std::int64_t n) { return index_transform_worker_cycles(n, costs); });
  out.sram_read_bytes += chunk.size() * kIndexBytes;
  out.sram_write_bytes += chunk.size() * kIndexBytes;
  v.buffers = {{index_buf[static_cast<std::size_t>(owner)], chunk.begin * kIndexBytes}, {blocks_of, 0}};
  v.execute = [count = chunk.size(), rows_b = plan.rows_per_block](const sim::VertexContext& ctx) {
    const auto* idx = ctx.as<const std::int32_t>(0);
    auto* block_of = ctx.as<std::int32_t>(1);
    for (std::int64_t j = 0; j < count; ++j) block_of[j] = static_cast<std::int32_t>(idx[j] / rows_b);
  };
  return blocks_of;
}

// The select vertex: each lookup of the chunk copies the candidate of the row block holding it (its
// own MultiSlice result for block k, else the received one).
void GatherProgram::add_select(sim::TileId owner, std::int64_t k, Range chunk, std::int64_t cols, sim::BufferId blocks_of,
                               sim::BufferId received, sim::BufferId result) {
  sim::Vertex& v = select.compute.add_vertex(owner);
  v.codelet = "MultiSlice (select)";
  v.supervisor_cycles = costs.supervisor_cycles;
  v.worker_cycles = worker_split_cycles(chunk.size(), W, [&](std::int64_t n) { return multislice_worker_cycles(n, 0, cols, costs); });
  out.sram_read_bytes += chunk.size() * (kIndexBytes + cols * vb);
  out.sram_write_bytes += chunk.size() * cols * vb;
  v.buffers = {{blocks_of, 0},
               {candidate_buf[static_cast<std::size_t>(owner)], chunk.begin * cols * vb},
               {received, 0},
               {result, 0}};
  if (out.program.timing_only) return;
  v.execute = with_value_storage(machine.value_dtype, [&](auto storage) -> sim::VertexBody {
    using V = decltype(storage);
    return [count = chunk.size(), k, cols](const sim::VertexContext& ctx) {
      const auto* block_of = ctx.as<const std::int32_t>(0);
      const auto* own = ctx.as<const V>(1);
      const auto* recv = ctx.as<const V>(2);
      auto* dst = ctx.as<V>(3);
      for (std::int64_t j = 0; j < count; ++j) {
        const std::int64_t s = block_of[j];
        const V* src = s == k ? own + j * cols : recv + ((s < k ? s : s - 1) * count + j) * cols;
        V* d = dst + j * cols;
        for (std::int64_t c = 0; c < cols; ++c) d[c] = src[c];
      }
    };
  });
}

// The last exchange moves the output from the plan's layout to the linear one.
void GatherProgram::move_output_to_linear_layout() {
  sim::Superstep& last = S > 1 ? select : slice;
  const LinearLayout layout = linear_layout(num_lookups * num_features, vb, machine);
  std::vector<TensorPiece> linear_pieces;
  const auto linear = add_linear_buffers(out.program, "out (linear)", layout, vb, &linear_pieces);
  last.exchange.name = "output to linear layout";
  add_linear_transfers(out.program, last.exchange, out.output, num_features, layout, linear, vb, /*to_linear=*/true);
  out.output = std::move(linear_pieces);
  out.output_width = 1;
}

OpProgram GatherProgram::finish() {
  out.input_width = table_from_linear ? 1 : num_features;
  out.output_width = num_features;
  if (machine.planner.gather_output_to_linear_layout) move_output_to_linear_layout();
  out.program.steps.push_back(std::move(distribute));
  out.program.steps.push_back(std::move(slice));
  if (S > 1) {
    out.program.steps.push_back(std::move(iota));
    out.program.steps.push_back(std::move(transform));
    out.program.steps.push_back(std::move(select));
  }
  append_loop_control(out.program, machine);
  return std::move(out);
}

}  // namespace

OpProgram build_gather_program(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& indices,
                               const IpuMachine& machine, sim::Mode mode) {
  GatherProgram gather(op, plan, indices, machine, mode);
  gather.place_table_blocks();
  for (std::int64_t i = 0; i < gather.I; ++i) gather.add_index_group(i);
  return gather.finish();
}

}  // namespace tilesim::ipu
