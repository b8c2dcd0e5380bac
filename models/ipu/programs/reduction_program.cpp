#include "models/ipu/programs/reduction_program.hpp"

#include <algorithm>
#include <utility>

#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/programs/value_storage.hpp"

namespace tilesim::ipu {

namespace {

// One summand of a Reduce vertex: where it lies on the summing tile and which outputs it holds.
struct Term {
  sim::BufferRef ref;
  Range outputs;
};

// The Reduce vertex summing `terms` (float32 partials) into `outputs` (held in `result`, as values of
// `result_dtype`), its workers sharing the outputs as the planner costs it (reduction_plan.cpp); a
// divisor other than 1 adds the mean's multiply.
sim::Vertex sum_vertex(const std::string& codelet, Range outputs, const std::vector<Term>& terms, sim::BufferId result,
                       DType result_dtype, double divisor, const IpuMachine& m) {
  const auto count = static_cast<std::int64_t>(terms.size());
  sim::Vertex v;
  v.codelet = codelet;
  v.supervisor_cycles = m.codelets.supervisor_cycles;
  v.worker_cycles = worker_split_cycles(outputs.size(), m.chip.worker_contexts, [&](std::int64_t n) {
    return reduce_worker_cycles(n, std::max<std::int64_t>(1, count), m.codelets) +
           (divisor != 1.0 ? binary_worker_cycles(BinaryFn::multiply, n, m.codelets) : 0);
  });
  std::vector<Range> ranges;
  for (const Term& t : terms) {
    v.buffers.push_back(t.ref);
    ranges.push_back(t.outputs);
  }
  v.buffers.push_back({result, 0});
  v.execute = with_value_storage(result_dtype, [&](auto storage) -> sim::VertexBody {
    using V = decltype(storage);
    return [outputs, ranges, divisor](const sim::VertexContext& ctx) {
      auto* y = ctx.as<V>(ranges.size());
      for (std::int64_t o = outputs.begin; o < outputs.end; ++o) {
        double sum = 0;
        for (std::size_t j = 0; j < ranges.size(); ++j)
          if (ranges[j].contains(o)) sum += ctx.as<const float>(j)[o - ranges[j].begin];
        store(&y[o - outputs.begin], static_cast<float>(sum / divisor));
      }
    };
  });
  return v;
}

class ReductionBuilder {
 public:
  ReductionBuilder(OpProgram& out, const std::map<std::int64_t, PartialBuffer>& partials) : out_(out), partials_(partials) {}

  // Slice `s` of a tile's partials as a term on tile `to`: read in place there, or received into a
  // buffer of its own by a transfer in `exchange`.
  Term term_from_partials(const PartialSlice& s, std::int64_t to, sim::ExchangePlan& exchange) {
    const PartialBuffer& p = partials_.at(s.tile);
    return term_from({p.buffer, (s.outputs.begin - p.first_output) * kPartialBytes}, s.tile, s.outputs, to, exchange);
  }

  Term term_from(sim::BufferRef ref, std::int64_t from, Range outputs, std::int64_t to, sim::ExchangePlan& exchange) {
    if (from == to) return {ref, outputs};
    const std::int64_t bytes = outputs.size() * kPartialBytes;
    const auto received = out_.program.add_buffer("received partial sums", static_cast<sim::TileId>(to), bytes);
    add_transfer(out_.program, exchange, ref, bytes, {received, 0});
    return {{received, 0}, outputs};
  }

  OpProgram& out_;
  const std::map<std::int64_t, PartialBuffer>& partials_;
};

}  // namespace

std::vector<TensorPiece> build_reduction(OpProgram& out, sim::Superstep partial_step,
                                         const std::map<std::int64_t, PartialBuffer>& partials,
                                         const ReductionSchedule& schedule, double divisor, const IpuMachine& machine,
                                         DType result_dtype) {
  ReductionBuilder b(out, partials);
  const bool two_stages = schedule.two_stages();
  sim::Superstep stage1{"group sums", {"Reduce (group sums)", {}}, {"group sums to the output's tiles", {}}};
  sim::Superstep final_step{"output sums", {"Reduce (output sums)", {}}, {"none", {}}};
  // The exchange that brings the owners their terms: after stage 1 when there is one.
  sim::ExchangePlan& to_owners = two_stages ? stage1.exchange : partial_step.exchange;
  if (!two_stages) to_owners.name = "partial sums to the output's tiles";
  else partial_step.exchange.name = "partial sums to their group's first tile";
  std::vector<TensorPiece> pieces;
  for (const OwnerReduction& o : schedule.owners) {
    std::vector<Term> terms;
    for (const PartialSlice& s : o.direct) terms.push_back(b.term_from_partials(s, o.tile, to_owners));
    for (const ReductionGroup& g : o.groups) {
      std::vector<Term> members;
      for (const PartialSlice& s : g.members) members.push_back(b.term_from_partials(s, g.tile(), partial_step.exchange));
      const auto sum = out.program.add_buffer("group sums", static_cast<sim::TileId>(g.tile()), g.outputs.size() * kPartialBytes);
      stage1.compute.vertices.push_back({static_cast<sim::TileId>(g.tile()), sum_vertex(stage1.compute.name, g.outputs, members, sum, kPartialDType, 1.0, machine)});
      terms.push_back(b.term_from({sum, 0}, g.tile(), g.outputs, o.tile, to_owners));
      out.sram_read_bytes += static_cast<std::int64_t>(members.size()) * g.outputs.size() * kPartialBytes;
      out.sram_write_bytes += g.outputs.size() * kPartialBytes;
    }
    const auto result = out.program.add_buffer("out (linear)", static_cast<sim::TileId>(o.tile), o.outputs.size() * dtype_bytes(result_dtype));
    final_step.compute.vertices.push_back(
        {static_cast<sim::TileId>(o.tile), sum_vertex(final_step.compute.name, o.outputs, terms, result, result_dtype, divisor, machine)});
    out.sram_read_bytes += static_cast<std::int64_t>(terms.size()) * o.outputs.size() * kPartialBytes;
    out.sram_write_bytes += o.outputs.size() * dtype_bytes(result_dtype);
    pieces.push_back({result, o.outputs.begin, o.outputs.size(), 0, 1});
  }
  out.program.steps.push_back(std::move(partial_step));
  if (two_stages) out.program.steps.push_back(std::move(stage1));
  out.program.steps.push_back(std::move(final_step));
  return pieces;
}

}  // namespace tilesim::ipu
