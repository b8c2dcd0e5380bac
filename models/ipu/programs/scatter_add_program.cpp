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
#include <algorithm>
#include <cstring>
#include <limits>

#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/planning/blocks.hpp"
#include "models/ipu/programs/linear_buffers.hpp"
#include "models/ipu/programs/op_program.hpp"

namespace tilesim::ipu {

namespace {

// A Fill vertex setting `bytes` of a buffer to `value` (float32), the bytes split evenly over the workers.
sim::Vertex fill_vertex(sim::BufferId buffer, std::int64_t bytes, const IpuMachine& machine, float value = 0.0f) {
  const std::int64_t W = machine.chip.worker_contexts;
  sim::Vertex fill;
  fill.codelet = "Fill";
  fill.supervisor_cycles = machine.codelets.supervisor_cycles;
  fill.worker_cycles.assign(static_cast<std::size_t>(W), 0);
  const std::int64_t chunk = ceil_div(bytes / kValueBytes, W) * kValueBytes;
  for (std::int64_t w = 0; w < W; ++w) {
    const Range bw = block(bytes, chunk, w);
    if (!bw.empty()) fill.worker_cycles[static_cast<std::size_t>(w)] = fill_worker_cycles(bw.size(), machine.codelets);
  }
  fill.buffers = {{buffer, 0}};
  if (value == 0.0f) {
    fill.execute = [bytes](const sim::VertexContext& ctx) { std::memset(ctx.data(0), 0, static_cast<std::size_t>(bytes)); };
  } else {
    fill.execute = [bytes, value](const sim::VertexContext& ctx) {
      std::fill(ctx.as<float>(0), ctx.as<float>(0) + bytes / kValueBytes, value);
    };
  }
  return fill;
}

// The vertex that ends a scatter_mean or scatter_max on the tile holding a finished block (rows x cols
// values, `counts` one per row for mean): divide by max(count, 1), or turn -inf into 0. Workers split the
// elements.
sim::Vertex finalise_vertex(OpKind kind, sim::BufferId values, sim::BufferId counts, std::int64_t rows, std::int64_t cols,
                            const IpuMachine& machine) {
  const std::int64_t W = machine.chip.worker_contexts;
  sim::Vertex v;
  v.codelet = kind == OpKind::scatter_mean ? "ScatterMeanDivide" : "ScatterMaxFillEmpty";
  v.supervisor_cycles = machine.codelets.supervisor_cycles;
  const std::int64_t elements = rows * cols;
  v.worker_cycles = worker_split_cycles(elements, W, [&](std::int64_t n) {
    return kind == OpKind::scatter_mean ? binary_worker_cycles(BinaryFn::divide, n, machine.codelets)
                                        : select_worker_cycles(n, machine.codelets);
  });
  if (kind == OpKind::scatter_mean) {
    v.buffers = {{values, 0}, {counts, 0}};
    v.execute = [rows, cols](const sim::VertexContext& ctx) {
      auto* x = ctx.as<float>(0);
      const auto* n = ctx.as<const float>(1);
      for (std::int64_t r = 0; r < rows; ++r) {
        const float d = std::max(n[r], 1.0f);
        for (std::int64_t c = 0; c < cols; ++c) x[r * cols + c] /= d;
      }
    };
  } else {
    v.buffers = {{values, 0}};
    v.execute = [elements](const sim::VertexContext& ctx) {
      auto* x = ctx.as<float>(0);
      for (std::int64_t e = 0; e < elements; ++e)
        if (x[e] == -std::numeric_limits<float>::infinity()) x[e] = 0.0f;
    };
  }
  return v;
}

}  // namespace

OpProgram build_scatter_add_program(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& indices,
                                    const IpuMachine& machine) {
  const std::int64_t S = plan.split.row_blocks, H = plan.split.column_blocks, I = plan.split.index_groups;
  const std::int64_t M = op.shape.num_inputs, F = op.shape.num_features, R = op.shape.num_outputs;
  const std::int64_t rows_b = plan.rows_per_block, cols_b = plan.columns_per_block, m_b = plan.indices_per_group;
  const std::int64_t W = machine.chip.worker_contexts;
  const auto& costs = machine.codelets;
  const TileGrid grid{S, H};
  const auto& tile = grid;
  const auto tiles = static_cast<std::size_t>(plan.tiles_used);
  const OpKind kind = op.kind;
  const bool has_messages = kind != OpKind::degree_count;
  const bool counts = kind == OpKind::scatter_mean;
  const bool is_max = kind == OpKind::scatter_max;
  const bool finalise = counts || is_max;
  // The identity the partials start from: 0 for sums and counts, -inf for the max.
  const float identity = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;

  OpProgram out;
  sim::Program& prog = out.program;
  prog.name = op.name;
  const std::string update_codelet =
      kind == OpKind::scatter_max ? "MultiUpdateMax" : kind == OpKind::degree_count ? "MultiUpdateCount" : "MultiUpdateAdd";
  sim::Superstep zero{"zero", {"Fill", {}}, {has_messages ? "indices and messages to groups" : "indices to groups", {}}};
  sim::Superstep update{"update", {update_codelet, {}}, {"partial sums", {}}};
  sim::Superstep reduce{"reduce", {is_max ? "ReduceMax" : "Reduce", {}}, {"none", {}}};

  std::vector<sim::BufferId> idx_buf(tiles, -1), src_buf(tiles, -1), partial(tiles, -1), count_buf(tiles, -1);

  // The zeroed output starts mapped linearly (torch.zeros), is filled there and exchanged into group
  // 0's blocks; the other groups zero their own partial sums.
  const bool base_from_linear = machine.planner.scatter_base_from_linear_layout;
  const LinearLayout out_layout = linear_layout(R * F, kValueBytes, machine);
  std::vector<sim::BufferId> linear_base;
  if (base_from_linear) {
    linear_base = add_linear_buffers(prog, "out (linear)", out_layout, kValueBytes, nullptr);
    for (std::int64_t t = 0; t < out_layout.tiles_used; ++t) {
      zero.compute.vertices.push_back({static_cast<sim::TileId>(t),
                                       fill_vertex(linear_base[static_cast<std::size_t>(t)], out_layout.tile_range(t).size() * kValueBytes,
                                                   machine, identity)});
      out.sram_write_bytes += out_layout.tile_range(t).size() * kValueBytes;
    }
  }
  // Messages an earlier op wrote live in the linear layout (the layout contract between ops); each
  // group's column blocks are exchanged from there to all S row-block tiles that need them.
  const bool messages_from_linear = has_messages && machine.planner.scatter_messages_from_linear_layout;
  const LinearLayout messages_layout = linear_layout(M * F, kValueBytes, machine);
  std::vector<sim::BufferId> linear_messages;
  if (messages_from_linear) linear_messages = add_linear_buffers(prog, "messages (linear)", messages_layout, kValueBytes, &out.input);
  std::vector<TensorPiece> group0_blocks;

  for (std::int64_t i = 0; i < I; ++i) {
    const Range mi = block(M, m_b, i);
    const std::int64_t n = mi.size();
    const std::int32_t* group_idx = indices.data() + mi.begin;
    // Sorted once, the group's offsets give any worker's in-range count by binary search.
    std::vector<std::int32_t> sorted_idx(group_idx, group_idx + n);
    std::sort(sorted_idx.begin(), sorted_idx.end());

    add_group_indices(prog, zero.exchange, grid, i, mi.begin, n, idx_buf, out.indices);

    // Messages: columns of block h live on tile (i, 0, h) and are broadcast over the row blocks.
    for (std::int64_t h = 0; has_messages && h < H; ++h) {
      const Range ch = block(F, cols_b, h);
      const std::int64_t bytes = n * ch.size() * kValueBytes;
      const auto b = prog.add_buffer("messages", tile(i, 0, h), bytes);
      src_buf[static_cast<std::size_t>(tile(i, 0, h))] = b;
      std::vector<sim::BufferId> copies;
      for (std::int64_t s = 1; s < S; ++s) {
        copies.push_back(prog.add_buffer("messages copy", tile(i, s, h), bytes));
        src_buf[static_cast<std::size_t>(tile(i, s, h))] = copies.back();
      }
      if (messages_from_linear) {
        const std::size_t first = zero.exchange.transfers.size();
        add_linear_transfers(zero.exchange, {{b, mi.begin, n, ch.begin, ch.size()}}, F, messages_layout, linear_messages, kValueBytes,
                             /*to_linear=*/false);
        for (std::size_t k = first; k < zero.exchange.transfers.size(); ++k) {
          auto& t = zero.exchange.transfers[k];
          const std::int64_t offset = t.dst.front().offset_bytes;
          for (const auto c : copies) t.dst.push_back({c, offset});
        }
        continue;
      }
      out.input.push_back({b, mi.begin, n, ch.begin, ch.size()});
      if (S > 1) {
        sim::Transfer t{{b, 0}, bytes, {}};
        for (const auto c : copies) t.dst.push_back({c, 0});
        zero.exchange.transfers.push_back(std::move(t));
      }
    }

    for (std::int64_t s = 0; s < S; ++s) {
      const Range rs = block(R, rows_b, s);
      for (std::int64_t h = 0; h < H; ++h) {
        const Range ch = block(F, cols_b, h);
        const std::int64_t cols = ch.size();
        const auto t = tile(i, s, h);
        const std::int64_t part_bytes = rs.size() * cols * kValueBytes;
        const auto part = prog.add_buffer(I == 1 ? "out" : "partial sums", t, part_bytes);
        partial[static_cast<std::size_t>(t)] = part;
        if (I == 1) out.output.push_back({part, rs.begin, rs.size(), ch.begin, cols});

        if (base_from_linear && i == 0) {
          group0_blocks.push_back({part, rs.begin, rs.size(), ch.begin, cols});
        } else {
          zero.compute.vertices.push_back({t, fill_vertex(part, part_bytes, machine, identity)});
          out.sram_write_bytes += part_bytes;
        }
        if (counts) {
          const auto cnt = prog.add_buffer(I == 1 ? "counts" : "partial counts", t, rs.size() * kValueBytes);
          count_buf[static_cast<std::size_t>(t)] = cnt;
          zero.compute.vertices.push_back({t, fill_vertex(cnt, rs.size() * kValueBytes, machine)});
          out.sram_write_bytes += rs.size() * kValueBytes;
        }

        sim::Vertex upd;
        upd.codelet = update_codelet;
        upd.supervisor_cycles = costs.supervisor_cycles;
        upd.worker_cycles.assign(static_cast<std::size_t>(W), 0);
        const std::int64_t rows_per_worker = ceil_div(rs.size(), W);
        std::int64_t in_total = 0, active_workers = 0;
        for (std::int64_t w = 0; w < W; ++w) {
          const Range rw = block(rs.size(), rows_per_worker, w);
          if (rw.empty()) continue;
          const Range owned{rs.begin + rw.begin, rs.begin + rw.end};
          const std::int64_t in = count_in_range(sorted_idx, owned);
          sim::Cycles c = multiupdateadd_worker_cycles(in, n - in, cols, costs);
          if (counts) c += multiupdateadd_worker_cycles(in, n - in, 1, costs);
          upd.worker_cycles[static_cast<std::size_t>(w)] = c;
          in_total += in;
          ++active_workers;
        }
        out.sram_read_bytes += active_workers * n * kIndexBytes + in_total * cols * (has_messages ? 2 : 1) * kValueBytes;
        out.sram_write_bytes += in_total * cols * kValueBytes;
        if (counts) {
          out.sram_read_bytes += active_workers * n * kIndexBytes + in_total * kValueBytes;
          out.sram_write_bytes += in_total * kValueBytes;
        }
        const std::int64_t row_begin = rs.begin, rows = rs.size();
        if (kind == OpKind::degree_count) {
          upd.buffers = {{idx_buf[static_cast<std::size_t>(t)], 0}, {part, 0}};
          upd.execute = [n, row_begin, rows](const sim::VertexContext& ctx) {
            const auto* idx = ctx.as<const std::int32_t>(0);
            auto* dst = ctx.as<float>(1);
            for (std::int64_t j = 0; j < n; ++j) {
              const std::int64_t r = idx[j] - row_begin;
              if (r >= 0 && r < rows) dst[r] += 1.0f;
            }
          };
        } else {
          upd.buffers = {{idx_buf[static_cast<std::size_t>(t)], 0}, {src_buf[static_cast<std::size_t>(t)], 0}, {part, 0}};
          if (counts) upd.buffers.push_back({count_buf[static_cast<std::size_t>(t)], 0});
          upd.execute = [n, row_begin, rows, cols, is_max, counts](const sim::VertexContext& ctx) {
            const auto* idx = ctx.as<const std::int32_t>(0);
            const auto* src = ctx.as<const float>(1);
            auto* dst = ctx.as<float>(2);
            float* cnt = counts ? ctx.as<float>(3) : nullptr;
            for (std::int64_t j = 0; j < n; ++j) {
              const std::int64_t r = idx[j] - row_begin;
              if (r < 0 || r >= rows) continue;
              float* d = dst + r * cols;
              const float* x = src + j * cols;
              if (is_max) {
                for (std::int64_t c = 0; c < cols; ++c) d[c] = std::max(d[c], x[c]);
              } else {
                for (std::int64_t c = 0; c < cols; ++c) d[c] += x[c];
              }
              if (cnt) cnt[r] += 1.0f;
            }
          };
        }
        update.compute.vertices.push_back({t, std::move(upd)});
        if (finalise && I == 1) {
          update.compute.vertices.push_back({t, finalise_vertex(kind, part, counts ? count_buf[static_cast<std::size_t>(t)] : -1,
                                                                rs.size(), cols, machine)});
          out.sram_read_bytes += part_bytes + (counts ? rs.size() * kValueBytes : 0);
          out.sram_write_bytes += part_bytes;
        }
      }
    }
  }

  if (I > 1) {
    // Row chunk k of every (s, h) block is summed (or maxed) on tile (k, s, h), in group order.
    for (std::int64_t s = 0; s < S; ++s) {
      const Range rs = block(R, rows_b, s);
      const std::int64_t chunk = ceil_div(rs.size(), I);
      for (std::int64_t h = 0; h < H; ++h) {
        const Range ch = block(F, cols_b, h);
        const std::int64_t cols = ch.size();
        for (std::int64_t k = 0; k < I; ++k) {
          const Range kk = block(rs.size(), chunk, k);
          if (kk.empty()) continue;
          const auto owner = tile(k, s, h);
          const std::int64_t piece_bytes = kk.size() * cols * kValueBytes;
          const std::int64_t count_bytes = kk.size() * kValueBytes;
          const auto received = prog.add_buffer("received partial sums", owner, (I - 1) * piece_bytes);
          const auto received_counts = counts ? prog.add_buffer("received partial counts", owner, (I - 1) * count_bytes) : -1;
          for (std::int64_t i = 0; i < I; ++i) {
            if (i == k) continue;
            const std::int64_t slot = i < k ? i : i - 1;
            update.exchange.transfers.push_back(
                {{partial[static_cast<std::size_t>(tile(i, s, h))], kk.begin * cols * kValueBytes}, piece_bytes, {{received, slot * piece_bytes}}});
            if (counts) {
              update.exchange.transfers.push_back(
                  {{count_buf[static_cast<std::size_t>(tile(i, s, h))], kk.begin * kValueBytes}, count_bytes, {{received_counts, slot * count_bytes}}});
            }
          }
          const auto result = prog.add_buffer("out", owner, piece_bytes);
          out.output.push_back({result, rs.begin + kk.begin, kk.size(), ch.begin, cols});

          sim::Vertex red;
          red.codelet = is_max ? "ReduceMax" : "Reduce";
          red.supervisor_cycles = costs.supervisor_cycles;
          const std::int64_t elements = kk.size() * cols;
          red.worker_cycles = worker_split_cycles(elements, W, [&](std::int64_t n) { return reduce_worker_cycles(n, I, costs); });
          out.sram_read_bytes += I * piece_bytes;
          out.sram_write_bytes += piece_bytes;
          red.buffers = {{partial[static_cast<std::size_t>(owner)], kk.begin * cols * kValueBytes}, {received, 0}, {result, 0}};
          red.execute = [elements, k, I, is_max](const sim::VertexContext& ctx) {
            const auto* own = ctx.as<const float>(0);
            const auto* recv = ctx.as<const float>(1);
            auto* dst = ctx.as<float>(2);
            for (std::int64_t e = 0; e < elements; ++e) {
              float acc = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
              for (std::int64_t i = 0; i < I; ++i) {
                const float x = i == k ? own[e] : recv[(i < k ? i : i - 1) * elements + e];
                acc = is_max ? std::max(acc, x) : acc + x;
              }
              dst[e] = acc;
            }
          };
          reduce.compute.vertices.push_back({owner, std::move(red)});
          sim::BufferId total_counts = -1;
          if (counts) {
            // The counts of the chunk, summed like the values (a 1-wide Reduce).
            total_counts = prog.add_buffer("counts", owner, count_bytes);
            sim::Vertex rc;
            rc.codelet = "Reduce";
            rc.supervisor_cycles = costs.supervisor_cycles;
            rc.worker_cycles = worker_split_cycles(kk.size(), W, [&](std::int64_t n) { return reduce_worker_cycles(n, I, costs); });
            out.sram_read_bytes += I * count_bytes;
            out.sram_write_bytes += count_bytes;
            rc.buffers = {{count_buf[static_cast<std::size_t>(owner)], kk.begin * kValueBytes}, {received_counts, 0}, {total_counts, 0}};
            rc.execute = [rows = kk.size(), k, I](const sim::VertexContext& ctx) {
              const auto* own = ctx.as<const float>(0);
              const auto* recv = ctx.as<const float>(1);
              auto* dst = ctx.as<float>(2);
              for (std::int64_t r = 0; r < rows; ++r) {
                float acc = 0.0f;
                for (std::int64_t i = 0; i < I; ++i) acc += i == k ? own[r] : recv[(i < k ? i : i - 1) * rows + r];
                dst[r] = acc;
              }
            };
            reduce.compute.vertices.push_back({owner, std::move(rc)});
          }
          if (finalise) {
            reduce.compute.vertices.push_back({owner, finalise_vertex(kind, result, total_counts, kk.size(), cols, machine)});
            out.sram_read_bytes += piece_bytes + (counts ? count_bytes : 0);
            out.sram_write_bytes += piece_bytes;
          }
        }
      }
    }
  }

  if (base_from_linear) {
    add_linear_transfers(zero.exchange, group0_blocks, F, out_layout, linear_base, kValueBytes, /*to_linear=*/false);
  }
  out.input_width = messages_from_linear ? 1 : F;
  out.output_width = F;
  sim::Superstep& last = I > 1 ? reduce : update;
  if (machine.planner.outputs_to_linear_layout) {
    // The last exchange moves the sums back to the linear layout (into the base they started from).
    std::vector<TensorPiece> linear_pieces;
    const auto linear = base_from_linear ? linear_base : add_linear_buffers(prog, "out (linear)", out_layout, kValueBytes, nullptr);
    for (std::int64_t t = 0; t < out_layout.tiles_used; ++t) {
      const Range r = out_layout.tile_range(t);
      linear_pieces.push_back({linear[static_cast<std::size_t>(t)], r.begin, r.size(), 0, 1});
    }
    last.exchange.name = "output to linear layout";
    add_linear_transfers(last.exchange, out.output, F, out_layout, linear, kValueBytes, /*to_linear=*/true);
    out.output = std::move(linear_pieces);
    out.output_width = 1;
  }
  prog.steps.push_back(std::move(zero));
  prog.steps.push_back(std::move(update));
  if (I > 1) prog.steps.push_back(std::move(reduce));
  append_loop_control(prog, machine);
  return out;
}

}  // namespace tilesim::ipu
