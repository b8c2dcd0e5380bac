#include "models/ipu/planning/plan.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "common/error.hpp"
#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/planning/blocks.hpp"
#include "models/ipu/planning/linear_layout.hpp"
#include "models/ipu/planning/phase_builders.hpp"
#include "models/ipu/planning/phase_estimate.hpp"
#include "models/ipu/planning/system_estimate.hpp"
#include "models/ipu/planning/temporary_budget.hpp"
#include "sim/program.hpp"

namespace tilesim::ipu {

namespace {

// The engine aligns every buffer; the planner counts the same way.
std::int64_t rows_split(const Op& op) { return op.kind == OpKind::gather ? op.shape.num_inputs : op.shape.num_outputs; }

// An exchange phase's cycles, and the part of them the planner's objective sees (poplibs ranks plans
// by bytes / exchange rate alone, without the fixed cost; syncs are charged by add_sync).
struct ExchangeEstimate {
  sim::Cycles cycles = 0;
  sim::Cycles objective_cycles = 0;
};
// The busiest tile sends and receives `bytes`.
ExchangeEstimate exchange_phase_cycles(std::int64_t bytes, const IpuMachine& m) {
  return {exchange_phase_estimate(bytes, bytes, m), exchange_transfer_estimate(bytes, bytes, m)};
}

OpPlan normalised(const Op& op, const Split& split, const IpuMachine& m) {
  if (split.row_blocks < 1 || split.column_blocks < 1 || split.index_groups < 1) {
    throw std::logic_error("estimate_plan: split factors must be positive");
  }
  OpPlan p;
  p.kind = op.kind;
  p.rows = rows_split(op);
  p.indices = op.num_indices();
  const std::int64_t F = op.shape.num_features;
  const std::int64_t grain = std::max<std::int64_t>(1, m.planner.column_grain_bytes / dtype_bytes(op.dtype));
  p.rows_per_block = ceil_div(p.rows, std::min(split.row_blocks, p.rows));
  p.split.row_blocks = ceil_div(p.rows, p.rows_per_block);
  const std::int64_t grains = ceil_div(F, grain);
  p.columns_per_block = std::min(F, ceil_div(grains, std::min(split.column_blocks, grains)) * grain);
  p.split.column_blocks = ceil_div(F, p.columns_per_block);
  p.indices_per_group = ceil_div(p.indices, std::min(split.index_groups, p.indices));
  p.split.index_groups = ceil_div(p.indices, p.indices_per_group);
  p.tiles_used = p.split.row_blocks * p.split.column_blocks * p.split.index_groups;
  if (p.tiles_used > m.chip.num_tiles) throw std::logic_error("estimate_plan: split uses more tiles than the machine has");
  return p;
}

// Names are literals, made strings only when the phase is listed: the planner estimates every candidate
// split of every op, and a name string per phase of each was most of its heap blocks.
void add_phase(OpPlan& p, const char* name, sim::Cycles cycles, sim::Cycles objective_cycles) {
  if (p.record_phases) p.phases.push_back({name, cycles});
  p.estimated_cycles += cycles;
  p.objective_cycles += objective_cycles;
}
void add_phase(OpPlan& p, const char* name, sim::Cycles cycles) { add_phase(p, name, cycles, cycles); }
void add_exchange(OpPlan& p, const char* name, const ExchangeEstimate& e, PhaseTraffic traffic,
                  bool distribution = false) {
  add_phase(p, name, e.cycles, e.objective_cycles);
  if (!p.record_phases) return;
  p.phases.back().traffic = traffic;
  p.phases.back().distribution = distribution;
}
void add_sync(OpPlan& p, const IpuMachine& m) {
  add_phase(p, "sync", m.chip.sync_cycles, m.planner.objective_sync_cycles);
}

// The objective's charge for a plan's base (table or output) layout: the bytes its busiest tile holds
// beyond the tensor's linear mapping (an even spread with at least linear_min_bytes_per_tile per tile),
// at the exchange rate.
sim::Cycles base_rearrangement_objective(std::int64_t block_bytes, std::int64_t tensor_elements, const IpuMachine& m) {
  if (!m.planner.objective_includes_base_rearrangement) return 0;
  const std::int64_t excess = block_bytes - linear_tile_bytes(tensor_elements, m.value_bytes(), m);
  return excess > 0 ? exchange_transfer_estimate(excess, excess, m) : 0;
}

// Columns of the whole tensor as the plan covers them (column blocks x block width, at least F).
std::int64_t op_columns(const OpPlan& p, std::int64_t H) { return p.columns_per_block * H; }

// The on-device repeat loop's control step: the same for every plan, so outside the objective.
void add_loop_control(OpPlan& p, const IpuMachine& m) {
  if (m.planner.repeat_loop_control_cycles == 0) return;
  add_phase(p, "compute: repeat loop control", m.planner.repeat_loop_control_cycles, 0);
  add_sync(p, m);
}

// Moving the output between the plan's layout and the linear one: each tile sends its share of the
// output and receives its linear chunk. Returns the bytes of the larger side for the busiest tile.
std::int64_t rearrangement_bytes(std::int64_t plan_output_bytes_per_tile, std::int64_t output_elements, const IpuMachine& m) {
  return std::max(plan_output_bytes_per_tile, linear_tile_bytes(output_elements, m.value_bytes(), m));
}

// The table block's bytes beyond an even spread of the table over all tiles: poplibs counts them as a
// temporary copy (the block rearranged out of the table's layout) when it charges their exchange.
std::int64_t base_excess_bytes(std::int64_t block_bytes, std::int64_t tensor_elements, const IpuMachine& m) {
  if (!m.planner.objective_includes_base_rearrangement) return 0;
  return std::max<std::int64_t>(0, block_bytes - linear_tile_bytes(tensor_elements, m.value_bytes(), m));
}

// A gather's temporaries on its busiest tile, as poplibs' slice planner counts them (DynamicSlice.cpp,
// sliceTempBytes): the larger of the first stage's (the table block copied to each index group, or
// rearranged, with the received indices and, with S > 1, the stage's candidate rows) and the second
// stage's (the candidate rows, the S candidates received per lookup, and the lookups' indices).
std::int64_t gather_temporary_bytes(const OpPlan& p, std::int64_t slab_bytes, std::int64_t row_bytes, const IpuMachine& m) {
  const std::int64_t S = p.split.row_blocks, H = p.split.column_blocks, I = p.split.index_groups;
  const std::int64_t ni = p.indices_per_group;
  const std::int64_t base = std::max(I > 1 ? aligned(slab_bytes) : 0, base_excess_bytes(slab_bytes, p.rows * op_columns(p, H), m));
  const std::int64_t first_indices = aligned(ni * kIndexBytes);
  if (S == 1) return base + first_indices;  // the stage writes the output itself
  const std::int64_t chunk = ceil_div(ni, S);
  const std::int64_t candidates = aligned(ni * row_bytes);
  const std::int64_t received = aligned((S - 1) * chunk * row_bytes) + aligned(chunk * row_bytes);
  return std::max(base + candidates + first_indices, candidates + received + aligned(chunk * kIndexBytes));
}

void estimate_gather(OpPlan& p, const IpuMachine& m) {
  const auto& c = m.codelets;
  const std::int64_t S = p.split.row_blocks, H = p.split.column_blocks, I = p.split.index_groups;
  const std::int64_t W = m.chip.worker_contexts;
  const std::int64_t cols = p.columns_per_block, ni = p.indices_per_group;
  const std::int64_t row_bytes = cols * m.value_bytes();
  const std::int64_t slab_bytes = p.rows_per_block * row_bytes;

  add_sync(p, m);
  const bool from_linear = m.planner.gather_table_from_linear_layout;
  const std::int64_t index_bytes = S * H > 1 ? ni * kIndexBytes : 0;
  ExchangeEstimate distribute = exchange_phase_cycles(index_bytes + (I > 1 || from_linear ? slab_bytes : 0), m);
  // poplibs charges the table broadcast to index groups, and the table bytes beyond an even spread.
  distribute.objective_cycles = exchange_phase_cycles(index_bytes + (I > 1 ? slab_bytes : 0), m).objective_cycles +
                                base_rearrangement_objective(slab_bytes, p.rows * op_columns(p, H), m);
  // Indices alone (no table copies) stay among the plan's tiles; table blocks come from elsewhere.
  add_exchange(p,
               from_linear ? "exchange: indices and table blocks to groups"
               : I > 1       ? "exchange: indices to groups, table to groups"
                             : "exchange: indices to groups",
               distribute, !from_linear && I == 1 ? PhaseTraffic::among_plan_tiles : PhaseTraffic::linear_layout,
               /*distribution=*/true);
  const std::int64_t per_worker = ceil_div(ni, W);
  const std::int64_t in_range = S == 1 ? per_worker : std::min(per_worker, ceil_div(per_worker * p.rows_per_block, p.rows));
  add_phase(p, "compute: MultiSlice", vertex_phase_estimate(multislice_worker_cycles(in_range, per_worker - in_range, cols, c), m));
  std::int64_t bytes = aligned(slab_bytes) + aligned(ni * kIndexBytes);
  if (from_linear) bytes += aligned(linear_tile_bytes(p.rows * op_columns(p, H), m.value_bytes(), m));
  if (S > 1) {
    // The second stage (programs/gather_program.cpp): iota and index transform, each its own superstep, then
    // the candidates travel to the lookups' owners, which select.
    const std::int64_t chunk = ceil_div(ni, S);
    add_sync(p, m);
    add_phase(p, "compute: iota", vertex_phase_estimate(index_transform_worker_cycles(ceil_div(chunk, W), c), m));
    add_sync(p, m);
    add_exchange(p, "exchange: stage-1 offsets", exchange_phase_cycles(chunk * kIndexBytes, m), PhaseTraffic::among_plan_tiles);
    add_phase(p, "compute: index transform", vertex_phase_estimate(index_transform_worker_cycles(ceil_div(chunk, W), c), m));
    add_sync(p, m);
    add_exchange(p, "exchange: candidate rows", exchange_phase_cycles((S - 1) * chunk * row_bytes, m),
                 PhaseTraffic::among_plan_tiles);
    add_phase(p, "compute: select candidates",
              vertex_phase_estimate(multislice_worker_cycles(ceil_div(chunk, W), 0, cols, c), m));
    bytes += aligned(ni * row_bytes) + aligned((S - 1) * chunk * row_bytes) + aligned(chunk * row_bytes) +
             2 * aligned(chunk * kIndexBytes);
  } else {
    bytes += aligned(ni * row_bytes);
  }
  p.estimated_temporary_tile_bytes = gather_temporary_bytes(p, slab_bytes, row_bytes, m);
  // A program's last superstep has no sync when no exchange follows it (sim/program.hpp).
  if (m.planner.gather_output_to_linear_layout) {
    const std::int64_t out_elements = p.indices * p.columns_per_block * H;
    const std::int64_t per_tile_out = (S > 1 ? ceil_div(ni, S) : ni) * row_bytes;
    add_sync(p, m);
    add_exchange(p, "exchange: output to linear layout",
                 exchange_phase_cycles(rearrangement_bytes(per_tile_out, out_elements, m), m), PhaseTraffic::linear_layout);
    bytes += aligned(linear_tile_bytes(out_elements, m.value_bytes(), m));
  }
  add_loop_control(p, m);
  p.estimated_peak_tile_bytes = bytes;
}

// The scatter family (scatter_add, scatter_mean, scatter_max, degree_count): see
// programs/scatter_add_program.cpp for what each kind adds to the scatter-add steps.
void estimate_scatter(OpPlan& p, const Op& op, const IpuMachine& m) {
  const auto& c = m.codelets;
  const std::int64_t S = p.split.row_blocks, H = p.split.column_blocks, I = p.split.index_groups;
  const std::int64_t W = m.chip.worker_contexts;
  const std::int64_t cols = p.columns_per_block, mi = p.indices_per_group;
  const std::int64_t row_bytes = cols * m.value_bytes();
  const std::int64_t part_bytes = p.rows_per_block * row_bytes;
  const bool has_messages = op.kind != OpKind::degree_count;
  const bool counts = op.kind == OpKind::scatter_mean;
  const bool finalise = counts || op.kind == OpKind::scatter_max;
  const bool messages_from_linear = has_messages && m.planner.scatter_messages_from_linear_layout;
  const std::int64_t count_bytes = counts ? p.rows_per_block * m.value_bytes() : 0;

  // A tile's Fill vertices: its partial block and (mean) its counts.
  sim::Cycles zero = vertex_estimate(fill_worker_cycles(ceil_div(part_bytes, W), c), m);
  if (counts) zero += vertex_estimate(fill_worker_cycles(ceil_div(count_bytes, W), c), m);
  add_phase(p, "compute: zero partials", compute_phase_estimate(zero, m));
  add_sync(p, m);
  const std::int64_t out_elements = p.rows * p.columns_per_block * H;
  const bool base_from_linear = m.planner.scatter_base_from_linear_layout;
  // Group 0's blocks receive the zeroed output from the linear layout in the same exchange.
  const std::int64_t base_bytes = base_from_linear ? rearrangement_bytes(part_bytes, out_elements, m) : 0;
  const std::int64_t message_bytes = has_messages && (S > 1 || messages_from_linear) ? mi * row_bytes : 0;
  const std::int64_t group_bytes = (S * H > 1 ? mi * kIndexBytes : 0) + message_bytes;
  ExchangeEstimate distribute = exchange_phase_cycles(group_bytes + base_bytes, m);
  // poplibs charges the base's bytes beyond an even spread twice: into the plan's layout and back.
  distribute.objective_cycles = exchange_phase_cycles(group_bytes, m).objective_cycles +
                                2 * base_rearrangement_objective(part_bytes, out_elements, m);
  add_exchange(p, base_from_linear ? "exchange: indices, messages and zeroed output to groups" : "exchange: indices and messages to groups",
               distribute, PhaseTraffic::linear_layout, /*distribution=*/true);
  const std::int64_t rows_per_worker = ceil_div(p.rows_per_block, W);
  const std::int64_t in_range = std::min(mi, ceil_div(mi * rows_per_worker, p.rows));
  sim::Cycles update_worker = multiupdateadd_worker_cycles(in_range, mi - in_range, cols, c);
  if (counts) update_worker += multiupdateadd_worker_cycles(in_range, mi - in_range, 1, c);
  sim::Cycles update = vertex_estimate(update_worker, m);
  // The last compute on the tile holding a finished block divides (mean) or clears empty rows (max).
  auto finalise_cycles = [&](std::int64_t elements) -> sim::Cycles {
    if (!finalise) return 0;
    return spread_vertex_estimate(elements, m, [&](std::int64_t n) {
      return counts ? binary_worker_cycles(BinaryFn::divide, n, c) : select_worker_cycles(n, c);
    });
  };
  if (I == 1) update += finalise_cycles(p.rows_per_block * cols);
  add_phase(p, op.kind == OpKind::scatter_max ? "compute: MultiUpdateMax" : "compute: MultiUpdateAdd",
            compute_phase_estimate(update, m));
  std::int64_t bytes = aligned(mi * kIndexBytes) + (has_messages ? aligned(mi * row_bytes) : 0) + aligned(part_bytes) +
                       (counts ? aligned(count_bytes) : 0);
  if (I > 1) {
    const std::int64_t chunk = ceil_div(p.rows_per_block, I);
    add_sync(p, m);
    add_exchange(p, "exchange: partial sums", exchange_phase_cycles((I - 1) * chunk * (row_bytes + (counts ? m.value_bytes() : 0)), m),
                 PhaseTraffic::among_plan_tiles);
    sim::Cycles reduce = vertex_estimate(reduce_worker_cycles(ceil_div(chunk * cols, W), I, c), m);
    if (counts) reduce += vertex_estimate(reduce_worker_cycles(ceil_div(chunk, W), I, c), m);
    reduce += finalise_cycles(chunk * cols);
    add_phase(p, "compute: reduce partials", compute_phase_estimate(reduce, m));
    bytes += aligned((I - 1) * chunk * row_bytes) + aligned(chunk * row_bytes);
    if (counts) bytes += aligned((I - 1) * chunk * m.value_bytes()) + aligned(chunk * m.value_bytes());
  }
  {
    // Temporaries as poplibs' update planner counts them (DynamicSlice.cpp, updateTempBytes): the output
    // block beyond an even spread (rearranged), plus the largest of: the messages multicast to the S row
    // blocks; those with the partials of an index split and the received indices; or, with I > 1, the
    // partials twice (the reduction's inputs and results).
    const std::int64_t multicast = has_messages && S > 1 ? aligned(mi * row_bytes) : 0;
    const std::int64_t partials = I > 1 ? aligned(part_bytes) + (counts ? aligned(count_bytes) : 0) : 0;
    const std::int64_t during = multicast + partials + aligned(mi * kIndexBytes);
    p.estimated_temporary_tile_bytes = base_excess_bytes(part_bytes, out_elements, m) + std::max({multicast, during, 2 * partials});
  }
  const std::int64_t linear_bytes = aligned(linear_tile_bytes(out_elements, m.value_bytes(), m));
  if (base_from_linear) bytes += linear_bytes;
  if (messages_from_linear) bytes += aligned(linear_tile_bytes(op.shape.num_inputs * op.shape.num_features, m.value_bytes(), m));
  if (m.planner.outputs_to_linear_layout) {
    const std::int64_t per_tile_out = (I > 1 ? ceil_div(p.rows_per_block, I) : p.rows_per_block) * row_bytes;
    add_sync(p, m);  // a sync only before an exchange: a program's last compute has none (sim/program.hpp)
    add_exchange(p, "exchange: output to linear layout",
                 exchange_phase_cycles(rearrangement_bytes(per_tile_out, out_elements, m), m), PhaseTraffic::linear_layout);
    if (!m.planner.scatter_base_from_linear_layout) bytes += linear_bytes;
  }
  add_loop_control(p, m);
  p.estimated_peak_tile_bytes = bytes;
}

}  // namespace

nlohmann::json OpPlan::to_json() const {
  nlohmann::json phases_json = nlohmann::json::array();
  for (const auto& ph : phases) phases_json.push_back({{"phase", ph.name}, {"cycles", ph.cycles}});
  nlohmann::json j = {
      {"row_blocks", split.row_blocks},
      {"column_blocks", split.column_blocks},
      {"index_groups", split.index_groups},
      {"k_blocks", split.k_blocks},
      {"k_per_block", k_per_block},
      {"segment_plans", parts.size()},
      {"rows_per_block", rows_per_block},
      {"columns_per_block", columns_per_block},
      {"indices_per_group", indices_per_group},
      {"tiles_used", tiles_used},
      {"estimated_cycles", estimated_cycles},
      {"objective_cycles", objective_cycles},
      {"estimated_phases", phases_json},
      {"estimated_peak_tile_bytes", estimated_peak_tile_bytes},
  };
  if (available_memory_proportion > 0) {
    j["temporary_memory"] = {
        {"available_memory_proportion", available_memory_proportion},
        {"estimated_temporary_tile_bytes", estimated_temporary_tile_bytes},
        {"temporary_budget_bytes", temporary_budget_bytes},
        {"within_budget", temporary_budget_met},
        {"choice", temporary_budget_met
                       ? "the plan with the lowest objective among those whose temporaries fit the budget"
                       : "no plan's temporaries fit the budget: the plan with the lowest objective that fits the "
                         "SRAM (poplibs retries with unlimited temporary memory)"}};
  }
  if (is_indexed(kind)) {
    j["indices"] = static_indices ? "static: compiled into the exchange (ipu:MACHINE:static)"
                                  : "dynamic: read at run time, planned for uniform indices";
  }
  return j;
}

void require_modelled_op_dtype(const Op& op, const IpuMachine& machine, const std::string& backend) {
  std::string reason = unmodelled_value_dtype_reason(machine, op.dtype);
  if (reason.empty() && op.kind == OpKind::cast) {
    reason = unmodelled_value_dtype_reason(machine, op.input_dtype);
    if (!reason.empty()) reason = "its input is " + to_string(op.input_dtype) + ": " + reason;
  }
  if (!reason.empty()) {
    throw InputError("backend " + backend + ": op '" + op.name + "' is " + to_string(op.dtype) + ": " + reason +
                     "; run it on cpu, torch-cpu, cuda or gpu-model:MACHINE");
  }
}

IpuMachine machine_for_op_dtype(const IpuMachine& machine, const Op& op) {
  require_modelled_op_dtype(op, machine, "ipu:" + machine.chip.name);
  return with_value_dtype(machine, op.dtype);
}

void require_value_dtype(const Op& op, const IpuMachine& machine) {
  if (machine.value_dtype != op.dtype) {
    throw std::logic_error("op '" + op.name + "' is " + to_string(op.dtype) + " but the IPU machine is set up for " +
                           to_string(machine.value_dtype) + " values (machine_for_op_dtype)");
  }
}

OpPlan estimate_plan(const Op& op, const Split& split, const IpuMachine& machine, bool record_phases) {
  if (machine.value_dtype != op.dtype) return estimate_plan(op, split, machine_for_op_dtype(machine, op), record_phases);
  if (!is_indexed(op.kind)) throw std::logic_error("estimate_plan: " + to_string(op.kind) + " is planned by plan_dense_op");
  OpPlan p = normalised(op, split, machine);
  // Across chips the link estimate reads the phases' traffic (add_cross_chip_estimate): always listed there.
  p.record_phases = record_phases || machine.chip.num_chips() > 1;
  if (p.record_phases) p.phases.reserve(16);  // more than any gather or scatter estimate lists: one block
  if (op.kind == OpKind::gather) {
    estimate_gather(p, machine);
  } else {
    estimate_scatter(p, op, machine);
  }
  add_cross_chip_estimate(p, machine);
  return p;
}

std::vector<Split> candidate_splits(const Op& op, const IpuMachine& machine) {
  const std::int64_t T = machine.chip.num_tiles;
  const std::int64_t grain = std::max<std::int64_t>(1, machine.planner.column_grain_bytes / dtype_bytes(op.dtype));
  const std::int64_t max_groups = std::max<std::int64_t>(1, ceil_div(op.num_indices(), machine.planner.min_indices_per_tile));
  // The normalised splits met so far, kept sorted in one block (a set's node per split was a tenth of
  // a timing-only sweep point's heap blocks); `out` keeps the order they were met in.
  std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> seen;
  std::vector<Split> out;
  for (std::int64_t s : powers_of_two_up_to(std::min<std::int64_t>(rows_split(op), T))) {
    for (std::int64_t h : powers_of_two_up_to(std::min<std::int64_t>(ceil_div(op.shape.num_features, grain), T / s))) {
      if (s * h > T) continue;
      auto groups = powers_of_two_up_to(std::min<std::int64_t>(max_groups, T / (s * h)));
      for (std::int64_t i : groups) {
        OpPlan p = normalised(op, {s, h, i}, machine);
        auto key = std::make_tuple(p.split.row_blocks, p.split.column_blocks, p.split.index_groups);
        const auto at = std::lower_bound(seen.begin(), seen.end(), key);
        if (at != seen.end() && *at == key) continue;
        seen.insert(at, key);
        out.push_back(p.split);
      }
    }
  }
  return out;
}

OpPlan plan_op(const Op& op, const IpuMachine& machine) { return plan_op(op, {}, machine); }

OpPlan plan_op(const Op& op, const std::vector<std::int32_t>& indices, const IpuMachine& machine) {
  if (machine.value_dtype != op.dtype) return plan_op(op, indices, machine_for_op_dtype(machine, op));
  if (!is_indexed(op.kind)) return plan_dense_op(op, indices, machine);
  // Every candidate's costs, without its phase list; the chosen one estimated again with it (the same
  // split, so the same figures): listing a dozen named phases for each of hundreds of candidates was
  // most of the planner's time.
  const std::vector<Split> splits = candidate_splits(op, machine);
  std::vector<OpPlan> plans;
  plans.reserve(splits.size());
  for (const Split& s : splits) plans.push_back(estimate_plan(op, s, machine, /*record_phases=*/false));
  OpPlan chosen;
  if (const OpPlan* pick = choose_within_budget(plans, available_memory_proportion(op, machine), machine, chosen)) {
    OpPlan full = estimate_plan(op, splits[static_cast<std::size_t>(pick - plans.data())], machine);
    full.available_memory_proportion = chosen.available_memory_proportion;
    full.temporary_budget_bytes = chosen.temporary_budget_bytes;
    full.temporary_budget_met = chosen.temporary_budget_met;
    return full;
  }
  const OpPlan* smallest = nullptr;
  for (const auto& p : plans)
    if (!smallest || p.estimated_peak_tile_bytes < smallest->estimated_peak_tile_bytes) smallest = &p;
  const OpPlan& s = *smallest;
  throw_does_not_fit(op, machine,
                     std::to_string(s.split.row_blocks) + " row blocks x " + std::to_string(s.split.column_blocks) +
                         " column blocks x " + std::to_string(s.split.index_groups) + " index groups",
                     s.estimated_peak_tile_bytes);
}

void throw_does_not_fit(const Op& op, const IpuMachine& machine, const std::string& plan_text, std::int64_t needed_bytes) {
  const std::int64_t sram = machine.chip.sram_bytes_per_tile;
  throw PlanError("op \"" + op.name + "\" (" + to_string(op.kind) + ", num_inputs " + std::to_string(op.shape.num_inputs) +
                  ", num_features " + std::to_string(op.shape.num_features) + ", num_outputs " +
                  std::to_string(op.shape.num_outputs) +
                  (op.shape.out_features > 0 ? ", out_features " + std::to_string(op.shape.out_features) : std::string()) +
                  ") does not fit on machine " + machine.chip.name + ": the plan needing the least memory (" + plan_text +
                  ") needs " + std::to_string(needed_bytes) + " bytes on tile 0, but a tile has " + std::to_string(sram) +
                  " bytes of SRAM; next step: " + more_ipus_next_step(machine) +
                  ", or use a smaller batch (fewer nodes or edges, or narrower features), or a machine with more or "
                  "larger tiles" +
                  (op.kind == OpKind::gather || is_scatter(op.kind)
                       ? std::string("; for a model on a fixed graph, ipu:MACHINE:static compiles its edges into the "
                                     "exchange and keeps operands in the linear layout")
                       : std::string()));
}

}  // namespace tilesim::ipu
