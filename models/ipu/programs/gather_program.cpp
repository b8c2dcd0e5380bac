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
#include <algorithm>
#include <cstring>

#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/planning/blocks.hpp"
#include "models/ipu/programs/linear_buffers.hpp"
#include "models/ipu/programs/op_program.hpp"

namespace tilesim::ipu {

OpProgram build_gather_program(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& indices,
                               const IpuMachine& machine) {
  const std::int64_t S = plan.split.row_blocks, H = plan.split.column_blocks, I = plan.split.index_groups;
  const std::int64_t R = op.shape.num_inputs, F = op.shape.num_features, N = op.shape.num_outputs;
  const std::int64_t rows_b = plan.rows_per_block, cols_b = plan.columns_per_block, n_b = plan.indices_per_group;
  const std::int64_t W = machine.chip.worker_contexts;
  const auto& costs = machine.codelets;
  const TileGrid grid{S, H};
  const auto& tile = grid;
  const auto tiles = static_cast<std::size_t>(plan.tiles_used);

  OpProgram out;
  sim::Program& prog = out.program;
  prog.name = op.name;
  sim::Superstep distribute{"distribute", {"distribute", {}}, {"indices and table to groups", {}}};
  sim::Superstep slice{"slice", {"MultiSlice", {}}, {"none", {}}};
  sim::Superstep iota{"iota", {"Iota", {}}, {"stage-1 offsets to lookup owners", {}}};
  sim::Superstep transform{"index transform", {"IndexTransform", {}}, {"candidate rows", {}}};
  sim::Superstep select{"select", {"select candidates", {}}, {"none", {}}};

  std::vector<sim::BufferId> slab(tiles, -1), idx_buf(tiles, -1), candidates(tiles, -1);

  // Table blocks. With table_from_linear_layout the table is a tensor mapped linearly (as an op's
  // input is), and every block is exchanged from there to its tiles in all groups; otherwise it is
  // resident on group 0 in the plan's layout and broadcast to the other groups.
  const bool from_linear = machine.planner.gather_table_from_linear_layout;
  const LinearLayout table_layout = linear_layout(R * F, kValueBytes, machine);
  std::vector<sim::BufferId> linear_table;
  if (from_linear) linear_table = add_linear_buffers(prog, "table (linear)", table_layout, kValueBytes, &out.input);
  for (std::int64_t s = 0; s < S; ++s) {
    const Range rs = block(R, rows_b, s);
    for (std::int64_t h = 0; h < H; ++h) {
      const Range ch = block(F, cols_b, h);
      const std::int64_t bytes = rs.size() * ch.size() * kValueBytes;
      const auto b = prog.add_buffer("table", tile(0, s, h), bytes);
      slab[static_cast<std::size_t>(tile(0, s, h))] = b;
      std::vector<sim::BufferId> copies;
      for (std::int64_t i = 1; i < I; ++i) {
        copies.push_back(prog.add_buffer("table copy", tile(i, s, h), bytes));
        slab[static_cast<std::size_t>(tile(i, s, h))] = copies.back();
      }
      if (from_linear) {
        // One transfer per linear run of the block, broadcast to the block's tile in every group.
        const std::size_t first = distribute.exchange.transfers.size();
        add_linear_transfers(distribute.exchange, {{b, rs.begin, rs.size(), ch.begin, ch.size()}}, F, table_layout,
                             linear_table, kValueBytes, /*to_linear=*/false);
        for (std::size_t k = first; k < distribute.exchange.transfers.size(); ++k) {
          auto& t = distribute.exchange.transfers[k];
          const std::int64_t offset = t.dst.front().offset_bytes;
          for (const auto c : copies) t.dst.push_back({c, offset});
        }
      } else {
        out.input.push_back({b, rs.begin, rs.size(), ch.begin, ch.size()});
        if (I > 1) {
          sim::Transfer t{{b, 0}, bytes, {}};
          for (const auto c : copies) t.dst.push_back({c, 0});
          distribute.exchange.transfers.push_back(std::move(t));
        }
      }
    }
  }

  for (std::int64_t i = 0; i < I; ++i) {
    const Range li = block(N, n_b, i);
    const std::int64_t ni = li.size();
    const std::int32_t* group_idx = indices.data() + li.begin;

    // The group's indices live on its first tile and are broadcast to the rest of the group.
    add_group_indices(prog, distribute.exchange, grid, i, li.begin, ni, idx_buf, out.indices);

    // Stage 0: MultiSlice on every tile of the group; workers split the lookups. Each worker's lookups,
    // sorted once, give its in-range count for any row block by binary search.
    const std::int64_t per_worker = ceil_div(ni, W);
    std::vector<std::vector<std::int32_t>> worker_sorted(static_cast<std::size_t>(W));
    for (std::int64_t w = 0; w < W; ++w) {
      const Range rw = block(ni, per_worker, w);
      auto& v = worker_sorted[static_cast<std::size_t>(w)];
      v.assign(group_idx + rw.begin, group_idx + rw.end);
      std::sort(v.begin(), v.end());
    }
    for (std::int64_t s = 0; s < S; ++s) {
      const Range rs = block(R, rows_b, s);
      for (std::int64_t h = 0; h < H; ++h) {
        const Range ch = block(F, cols_b, h);
        const std::int64_t cols = ch.size();
        const auto t = tile(i, s, h);
        const auto dest = prog.add_buffer(S == 1 ? "out" : "candidates", t, ni * cols * kValueBytes);
        candidates[static_cast<std::size_t>(t)] = dest;
        if (S == 1) out.output.push_back({dest, li.begin, ni, ch.begin, cols});

        sim::Vertex v;
        v.codelet = "MultiSlice";
        v.supervisor_cycles = costs.supervisor_cycles;
        v.worker_cycles.assign(static_cast<std::size_t>(W), 0);
        std::int64_t in_total = 0;
        for (std::int64_t w = 0; w < W; ++w) {
          const Range rw = block(ni, per_worker, w);
          if (rw.empty()) continue;
          const std::int64_t in = count_in_range(worker_sorted[static_cast<std::size_t>(w)], rs);
          v.worker_cycles[static_cast<std::size_t>(w)] = multislice_worker_cycles(in, rw.size() - in, cols, costs);
          in_total += in;
        }
        out.sram_read_bytes += ni * kIndexBytes + in_total * cols * kValueBytes;
        out.sram_write_bytes += in_total * cols * kValueBytes;
        v.buffers = {{idx_buf[static_cast<std::size_t>(t)], 0}, {slab[static_cast<std::size_t>(t)], 0}, {dest, 0}};
        v.execute = [ni, row_begin = rs.begin, rows = rs.size(), cols](const sim::VertexContext& ctx) {
          const auto* idx = ctx.as<const std::int32_t>(0);
          const auto* table = ctx.as<const float>(1);
          auto* dst = ctx.as<float>(2);
          for (std::int64_t j = 0; j < ni; ++j) {
            const std::int64_t r = idx[j] - row_begin;
            if (r < 0 || r >= rows) continue;
            // Rows of a column block are short; a loop the compiler vectorises beats a library call.
            const float* src = table + r * cols;
            float* d = dst + j * cols;
            for (std::int64_t c = 0; c < cols; ++c) d[c] = src[c];
          }
        };
        slice.compute.vertices.push_back({t, std::move(v)});
      }
    }

    if (S == 1) continue;
    // Stage 1: lookup chunk k of the group is owned by tile (i, k, h), which receives the candidates of
    // the other S - 1 row blocks and keeps the valid one.
    const std::int64_t chunk = ceil_div(ni, S);
    {
      // The iota of the stage-1 offsets, on the group's index tile, sent to every owner.
      const auto index_tile = tile(i, 0, 0);
      const auto offsets = prog.add_buffer("stage-1 offsets (iota)", index_tile, chunk * kIndexBytes);
      sim::Vertex v;
      v.codelet = "Iota";
      v.supervisor_cycles = costs.supervisor_cycles;
      v.worker_cycles = worker_split_cycles(chunk, W, [&](std::int64_t n) { return index_transform_worker_cycles(n, costs); });
      out.sram_write_bytes += chunk * kIndexBytes;
      v.buffers = {{offsets, 0}};
      v.execute = [chunk](const sim::VertexContext& ctx) {
        auto* o = ctx.as<std::int32_t>(0);
        for (std::int64_t j = 0; j < chunk; ++j) o[j] = static_cast<std::int32_t>(j);
      };
      iota.compute.vertices.push_back({index_tile, std::move(v)});
      sim::Transfer to_owners{{offsets, 0}, chunk * kIndexBytes, {}};
      for (std::int64_t k = 0; k < S; ++k) {
        if (block(ni, chunk, k).empty()) continue;
        for (std::int64_t h = 0; h < H; ++h) {
          const auto owner = tile(i, k, h);
          if (owner != index_tile) to_owners.dst.push_back({prog.add_buffer("stage-1 offsets", owner, chunk * kIndexBytes), 0});
        }
      }
      if (!to_owners.dst.empty()) iota.exchange.transfers.push_back(std::move(to_owners));
    }
    for (std::int64_t k = 0; k < S; ++k) {
      const Range kk = block(ni, chunk, k);
      if (kk.empty()) continue;
      for (std::int64_t h = 0; h < H; ++h) {
        const Range ch = block(F, cols_b, h);
        const std::int64_t cols = ch.size();
        const auto owner = tile(i, k, h);
        const std::int64_t piece_bytes = kk.size() * cols * kValueBytes;
        const auto received = prog.add_buffer("received candidates", owner, (S - 1) * piece_bytes);
        for (std::int64_t s = 0; s < S; ++s) {
          if (s == k) continue;
          const std::int64_t slot = s < k ? s : s - 1;
          transform.exchange.transfers.push_back(
              {{candidates[static_cast<std::size_t>(tile(i, s, h))], kk.begin * cols * kValueBytes}, piece_bytes, {{received, slot * piece_bytes}}});
        }
        const auto result = prog.add_buffer("out", owner, piece_bytes);
        out.output.push_back({result, li.begin + kk.begin, kk.size(), ch.begin, cols});

        sim::Vertex v;
        v.codelet = "MultiSlice (select)";
        v.supervisor_cycles = costs.supervisor_cycles;
        v.worker_cycles =
            worker_split_cycles(kk.size(), W, [&](std::int64_t n) { return multislice_worker_cycles(n, 0, cols, costs); });
        out.sram_read_bytes += kk.size() * (kIndexBytes + cols * kValueBytes);
        out.sram_write_bytes += piece_bytes;
        // The stage's indices are transformed first (which row block holds each lookup: an
        // elementwise integer op over the chunk), then the select vertex reads them.
        const auto blocks_of = prog.add_buffer("candidate blocks", owner, kk.size() * kIndexBytes);
        sim::Vertex tv;
        tv.codelet = "IndexTransform";
        tv.supervisor_cycles = costs.supervisor_cycles;
        tv.worker_cycles = worker_split_cycles(kk.size(), W, [&](std::int64_t n) { return index_transform_worker_cycles(n, costs); });
        out.sram_read_bytes += kk.size() * kIndexBytes;
        out.sram_write_bytes += kk.size() * kIndexBytes;
        tv.buffers = {{idx_buf[static_cast<std::size_t>(owner)], kk.begin * kIndexBytes}, {blocks_of, 0}};
        tv.execute = [count = kk.size(), rows_b](const sim::VertexContext& ctx) {
          const auto* idx = ctx.as<const std::int32_t>(0);
          auto* block_of = ctx.as<std::int32_t>(1);
          for (std::int64_t j = 0; j < count; ++j) block_of[j] = static_cast<std::int32_t>(idx[j] / rows_b);
        };
        transform.compute.vertices.push_back({owner, std::move(tv)});

        v.buffers = {{blocks_of, 0},
                     {candidates[static_cast<std::size_t>(owner)], kk.begin * cols * kValueBytes},
                     {received, 0},
                     {result, 0}};
        v.execute = [count = kk.size(), k, cols](const sim::VertexContext& ctx) {
          const auto* block_of = ctx.as<const std::int32_t>(0);
          const auto* own = ctx.as<const float>(1);
          const auto* recv = ctx.as<const float>(2);
          auto* dst = ctx.as<float>(3);
          for (std::int64_t j = 0; j < count; ++j) {
            const std::int64_t s = block_of[j];
            const float* src = s == k ? own + j * cols : recv + ((s < k ? s : s - 1) * count + j) * cols;
            float* d = dst + j * cols;
            for (std::int64_t c = 0; c < cols; ++c) d[c] = src[c];
          }
        };
        select.compute.vertices.push_back({owner, std::move(v)});
      }
    }
  }

  out.input_width = from_linear ? 1 : F;
  out.output_width = F;
  sim::Superstep& last = S > 1 ? select : slice;
  if (machine.planner.gather_output_to_linear_layout) {
    // The last exchange moves the output from the plan's layout to the linear one.
    const LinearLayout layout = linear_layout(N * F, kValueBytes, machine);
    std::vector<TensorPiece> linear_pieces;
    const auto linear = add_linear_buffers(prog, "out (linear)", layout, kValueBytes, &linear_pieces);
    last.exchange.name = "output to linear layout";
    add_linear_transfers(last.exchange, out.output, F, layout, linear, kValueBytes, /*to_linear=*/true);
    out.output = std::move(linear_pieces);
    out.output_width = 1;
  }
  prog.steps.push_back(std::move(distribute));
  prog.steps.push_back(std::move(slice));
  if (S > 1) {
    prog.steps.push_back(std::move(iota));
    prog.steps.push_back(std::move(transform));
    prog.steps.push_back(std::move(select));
  }
  append_loop_control(prog, machine);
  return out;
}

}  // namespace tilesim::ipu
