// The gather with indices known when the program is compiled (static_index_program.hpp): table and
// output are both in the linear layout. Every output row's bytes go straight from the tile holding the
// table row into the output row: one transfer per (table row, run of columns), multicast to every
// output row that looks it up; rows whose output is on the same tile are copied there by a vertex
// instead. One superstep.
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/programs/linear_runs.hpp"
#include "models/ipu/programs/static_index_program.hpp"

namespace tilesim::ipu {

namespace {

// The lookups of each table row, by counting sort: row r's lookups (output rows) are
// lookups[begin[r]] to lookups[begin[r + 1] - 1], ascending.
struct LookupsByRow {
  std::vector<std::int64_t> begin, lookups;
};

LookupsByRow lookups_by_row(const std::vector<std::int32_t>& indices, std::int64_t rows) {
  LookupsByRow by;
  by.begin.assign(static_cast<std::size_t>(rows) + 1, 0);
  for (std::int32_t r : indices) ++by.begin[static_cast<std::size_t>(r) + 1];
  for (std::size_t r = 1; r < by.begin.size(); ++r) by.begin[r] += by.begin[r - 1];
  by.lookups.resize(indices.size());
  std::vector<std::int64_t> next(by.begin.begin(), by.begin.end() - 1);
  for (std::size_t e = 0; e < indices.size(); ++e) {
    by.lookups[static_cast<std::size_t>(next[static_cast<std::size_t>(indices[e])]++)] = static_cast<std::int64_t>(e);
  }
  return by;
}

struct LocalCopy {
  std::int64_t src_byte = 0, dst_byte = 0, bytes = 0;
};

// Where each run of each table row goes: into `exchange`, one transfer per (table row, run of columns)
// multicast to every output row looking the row up; into `local` (by tile), the runs whose output
// lies on the table row's own tile.
void route_table_rows(const LookupsByRow& by_row, const LinearLayout& table, const LinearLayout& output, std::int64_t num_features,
                      std::int64_t vb, const LinearProgram& linear, sim::ExchangePlan& exchange,
                      std::vector<std::vector<LocalCopy>>& local) {
  // The transfers of the current row so far, by run: a later lookup with the same run joins it.
  struct Open {
    std::int64_t col, count;
    std::size_t transfer;
  };
  std::vector<Open> open;
  const std::int64_t table_rows = static_cast<std::int64_t>(by_row.begin.size()) - 1;
  for (std::int64_t r = 0; r < table_rows; ++r) {
    open.clear();
    for (std::int64_t k = by_row.begin[static_cast<std::size_t>(r)]; k < by_row.begin[static_cast<std::size_t>(r) + 1]; ++k) {
      for_each_run(table, r, output, by_row.lookups[static_cast<std::size_t>(k)], num_features, 0, num_features, [&](const RowRun& run) {
        const sim::BufferRef dst{linear.output[static_cast<std::size_t>(run.dst_tile)], run.dst_element * vb};
        if (run.src_tile == run.dst_tile) {
          local[static_cast<std::size_t>(run.dst_tile)].push_back({run.src_element * vb, dst.offset_bytes, run.count * vb});
          return;
        }
        for (const Open& o : open) {
          if (o.col == run.col && o.count == run.count) {
            exchange.transfers[o.transfer].dst.push_back(dst);
            return;
          }
        }
        open.push_back({run.col, run.count, exchange.transfers.size()});
        exchange.transfers.push_back(
            {{linear.input[static_cast<std::size_t>(run.src_tile)], run.src_element * vb}, run.count * vb, {dst}});
      });
    }
  }
}

// The vertex on tile t copying its local runs from its table rows into its output rows, costed as a
// MultiSlice of that many lookups of the runs' mean length, the lookups split over the workers.
sim::Vertex local_copy_vertex(std::vector<LocalCopy> runs, std::size_t t, const LinearProgram& linear, const IpuMachine& machine,
                              OpProgram& out) {
  auto copies = std::make_shared<const std::vector<LocalCopy>>(std::move(runs));
  std::int64_t bytes = 0;
  for (const auto& c : *copies) bytes += c.bytes;
  out.sram_read_bytes += bytes;
  out.sram_write_bytes += bytes;
  sim::Vertex v;
  v.codelet = "copy local rows";
  const std::int64_t n = static_cast<std::int64_t>(copies->size());
  const std::int64_t elements_per_copy = ceil_div(bytes / machine.value_bytes(), n);
  v.worker_cycles = worker_split_cycles(n, machine.chip.worker_contexts, [&](std::int64_t k) {
    return multislice_worker_cycles(k, 0, elements_per_copy, machine.codelets);
  });
  v.supervisor_cycles = machine.codelets.supervisor_cycles;
  v.buffers = {{linear.input[t], 0}, {linear.output[t], 0}};
  v.execute = [copies](const sim::VertexContext& ctx) {
    for (const auto& c : *copies) std::memcpy(ctx.data(1) + c.dst_byte, ctx.data(0) + c.src_byte, static_cast<std::size_t>(c.bytes));
  };
  return v;
}

}  // namespace

OpProgram build_static_gather_program(const Op& op, const std::vector<std::int32_t>& indices, const IpuMachine& machine) {
  if (machine.value_dtype != op.dtype) return build_static_gather_program(op, indices, machine_for_op_dtype(machine, op));
  const std::int64_t table_rows = op.shape.num_inputs, num_features = op.shape.num_features, num_lookups = op.shape.num_outputs;
  if (static_cast<std::int64_t>(indices.size()) != num_lookups)
    throw std::logic_error("static gather: index count differs from num_outputs");
  require_value_dtype(op, machine);
  const std::int64_t vb = machine.value_bytes();
  const LinearLayout table = linear_layout(table_rows * num_features, vb, machine);
  const LinearLayout output = linear_layout(num_lookups * num_features, vb, machine);
  LinearProgram linear = linear_program(op, "table", table, output, vb);
  OpProgram& out = linear.op;

  sim::Superstep step{"static gather", {"copy local rows", {}}, {"rows to their lookups", {}}};
  std::vector<std::vector<LocalCopy>> local(static_cast<std::size_t>(output.tiles_used));
  route_table_rows(lookups_by_row(indices, table_rows), table, output, num_features, vb, linear, step.exchange, local);
  for (std::size_t t = 0; t < local.size(); ++t) {
    if (local[t].empty()) continue;
    if (t >= linear.input.size()) throw std::logic_error("static gather: a local copy on a tile without table rows");
    step.compute.vertices.push_back({static_cast<sim::TileId>(t), local_copy_vertex(std::move(local[t]), t, linear, machine, out)});
  }
  for (const auto& tr : step.exchange.transfers) out.sram_read_bytes += tr.total_bytes();
  out.program.steps.push_back(std::move(step));
  append_loop_control(out.program, machine);
  return std::move(linear.op);
}

}  // namespace tilesim::ipu
