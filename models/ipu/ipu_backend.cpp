#include "models/ipu/ipu_backend.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include "common/error.hpp"
#include "ir/operands.hpp"
#include "ir/reference/reference.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/planning/plan.hpp"
#include "models/ipu/planning/step_memory.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "models/ipu/programs/static_index_program.hpp"
#include "models/ipu/programs/tensor_io.hpp"
#include "ir/half_float.hpp"

namespace tilesim::ipu {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// For each tensor, the position of the last op that reads it as a value operand (input, weight,
// bias), or -1 when none does.
std::vector<std::ptrdiff_t> last_readers(const OpGraph& graph) {
  std::vector<std::ptrdiff_t> last(graph.tensors.size(), -1);
  for (std::size_t k = 0; k < graph.ops.size(); ++k) {
    const Op& op = graph.ops[k];
    for (const TensorId t : {op.input, op.weight, op.bias}) {
      if (t >= 0) last[static_cast<std::size_t>(t)] = static_cast<std::ptrdiff_t>(k);
    }
  }
  return last;
}

// The machine as one op of a graph sees it (the layout contract between ops, programs/op_program.hpp): a
// gather table or scatter messages that an earlier op wrote start in the linear layout, whatever the
// machine file says for graph inputs; a gather whose output a later op reads leaves it there. `machine`
// itself when the op changes nothing, else `scratch` set up: a machine carries its figures' provenance,
// and copying it twice for every op was a tenth of a timing-only sweep point's heap blocks.
const IpuMachine& machine_for(const Op& op, const std::vector<bool>& written, const std::vector<std::ptrdiff_t>& last_reader,
                              const IpuMachine& machine, std::optional<IpuMachine>& scratch) {
  const bool input_written = op.input >= 0 && written[static_cast<std::size_t>(op.input)];
  const bool output_read = op.kind == OpKind::gather && last_reader[static_cast<std::size_t>(op.output)] >= 0;
  if (machine.value_dtype == op.dtype && !input_written && !output_read) {
    require_modelled_op_dtype(op, machine, "ipu:" + machine.chip.name);
    return machine;
  }
  IpuMachine& m = scratch.emplace(machine_for_op_dtype(machine, op));
  if (input_written && op.kind == OpKind::gather) m.planner.gather_table_from_linear_layout = true;
  if (input_written && is_scatter(op.kind)) m.planner.scatter_messages_from_linear_layout = true;
  if (output_read) m.planner.gather_output_to_linear_layout = true;
  return m;
}

// Loads an op's program; a tile the program overflows (the plan's memory estimate can miss what the
// actual indices or offsets put on a tile) is the same exit-3 error as a plan that does not fit.
void load_op(sim::Engine& engine, const OpProgram& program, const Op& op, const IpuMachine& machine, sim::Mode mode) {
  try {
    engine.load(program.program, machine.chip, mode);
  } catch (const PlanError& e) {
    throw PlanError("op \"" + op.name + "\" (" + to_string(op.kind) + "): " + e.what() +
                    "; next step: " + more_ipus_next_step(machine) +
                    ", or use a smaller batch (fewer nodes or edges, or narrower features)");
  }
}

// An operand's values (float32 numbers; those of a half tensor are values of its type) written to its
// pieces as the tiles hold them (value_storage.hpp).
void write_values(sim::Engine& engine, const std::vector<TensorPiece>& pieces, const std::vector<float>* values,
                  std::int64_t width, DType dtype) {
  if (values == nullptr) return;
  if (dtype == DType::float32) {
    write_pieces(engine, pieces, *values, width);
    return;
  }
  std::vector<Float16> bits(values->size());
  std::transform(values->begin(), values->end(), bits.begin(), [](float x) { return to_float16(x); });
  write_pieces(engine, pieces, bits, width);
}

std::vector<float> read_values(const sim::Engine& engine, const std::vector<TensorPiece>& pieces, std::int64_t elements,
                               std::int64_t width, DType dtype) {
  std::vector<float> out(static_cast<std::size_t>(elements));
  if (dtype == DType::float32) {
    read_pieces(engine, pieces, out, width);
    return out;
  }
  std::vector<Float16> bits(out.size());
  read_pieces(engine, pieces, bits, width);
  std::transform(bits.begin(), bits.end(), out.begin(), [](Float16 x) { return to_float(x); });
  return out;
}

const std::vector<std::int32_t>& no_indices() {
  static const std::vector<std::int32_t> none;
  return none;
}

}  // namespace

namespace {

std::int32_t& reserved_engine_tiles() {
  static std::int32_t tiles = 0;
  return tiles;
}

}  // namespace

void reserve_engine_tiles(std::int32_t tiles) {
  reserved_engine_tiles() = std::max(reserved_engine_tiles(), tiles);
}

sim::Engine& engine_for(const IpuMachine& machine) {
  static const std::int32_t board_max = [] {
    std::int32_t most = 0;
    for (const auto& name : shipped_ipu_machines()) {
      const IpuMachine m = load_ipu_machine(name);
      if (m.system.num_ipus <= 8) most = std::max(most, m.chip.num_tiles);
    }
    return most;
  }();
  const std::int32_t wanted = std::max({board_max, reserved_engine_tiles(), machine.chip.num_tiles});
  try {
    return sim::Engine::instance(wanted);
  } catch (const std::logic_error& e) {
    throw std::logic_error("ipu machine " + machine.chip.name + " (" + std::to_string(machine.chip.num_tiles) +
                           " tiles; this process has reserved " + std::to_string(reserved_engine_tiles()) +
                           ") needs more tile slots than its engine was elaborated with (" + e.what() +
                           "): make the largest machine's backend (or call ipu::reserve_engine_tiles) before anything runs");
  }
}

OpTiming simulate_op_timing(const Op& op, const std::vector<std::int32_t>& indices, const IpuMachine& machine) {
  require_modelled_op_dtype(op, machine, "ipu:" + machine.chip.name);
  sim::Engine& engine = engine_for(machine);
  OpTiming t;
  t.plan = plan_op(op, indices, machine);
  const OpProgram program = build_op_program(op, t.plan, indices, machine, sim::Mode::timing_only);
  load_op(engine, program, op, machine, sim::Mode::timing_only);
  t.stats = engine.run();
  t.time_s = machine.chip.seconds(t.stats.total_cycles);
  return t;
}

IpuBackend::IpuBackend(IpuMachine machine, std::string name, IndexMode index_mode)
    : machine_(std::move(machine)), name_(std::move(name)), index_mode_(index_mode) {
  reserve_engine_tiles(machine_.chip.num_tiles);
}

bool IpuBackend::compiled_indices(const OpGraph& graph, const Op& op) const {
  return index_mode_ == IndexMode::static_ && static_index_kind(op.kind) && op.indices >= 0 &&
         graph.tensor(op.indices).known_at_compile_time;
}

std::vector<OpPlan> IpuBackend::plan_graph(const OpGraph& graph, const TensorValues* inputs,
                                           std::vector<std::int64_t>& op_tile_bytes) const {
  std::vector<bool> written(graph.tensors.size(), false);
  const std::vector<std::ptrdiff_t> last_reader = last_readers(graph);
  std::vector<OpPlan> plans;
  op_tile_bytes.clear();
  for (const Op& op : graph.ops) {
    std::optional<IpuMachine> scratch;
    const IpuMachine& machine = machine_for(op, written, last_reader, machine_, scratch);
    if (compiled_indices(graph, op)) {
      // What any index set needs; the indices' own partials are checked when the program is built.
      const std::int64_t need = static_index_min_tile_bytes(op, machine);
      if (need > machine.chip.sram_bytes_per_tile) {
        throw_does_not_fit(op, machine, "indices compiled into the exchange, operands in the linear layout", need);
      }
      plans.push_back(static_index_plan(op, machine));
      op_tile_bytes.push_back(need);
    } else {
      // With the op's index tensor when there are values (a segment_matmul follows its offsets).
      const bool has_indices = inputs != nullptr && op.indices >= 0;
      plans.push_back(has_indices ? plan_op(op, inputs->i32(op.indices), machine) : plan_op(op, machine));
      op_tile_bytes.push_back(plans.back().estimated_peak_tile_bytes);
    }
    written[static_cast<std::size_t>(op.output)] = true;
  }
  return plans;
}

bool IpuBackend::plans_read_indices(const OpGraph& graph) const {
  // plan_graph hands an op its index tensor when it has one and is not compiled into the exchange;
  // the indexed ops' planners read only its length.
  return std::any_of(graph.ops.begin(), graph.ops.end(), [&](const Op& op) {
    return op.indices >= 0 && !is_indexed(op.kind) && !compiled_indices(graph, op);
  });
}

StepMemory IpuBackend::plan_memory(const OpGraph& graph) const {
  std::vector<std::int64_t> op_tile_bytes;
  plan_graph(graph, nullptr, op_tile_bytes);
  return step_memory(graph, op_tile_bytes, machine_);
}

// The engine's tile modules and the shipped machines engine_for reads: about 40 ms, once per process.
void IpuBackend::warm_up() { engine_for(machine_); }

void IpuBackend::prepare(const OpGraph& graph) {
  for (const Op& op : graph.ops) require_modelled_op_dtype(op, machine_, name_);
  check_step_memory(graph, plan_memory(graph), machine_);
}

BackendResult IpuBackend::run(const OpGraph& graph, const TensorValues& inputs, const RunOptions& options) {
  // Every path in, prepare() or not (a sweep's timing-only points call run alone).
  for (const Op& op : graph.ops) require_modelled_op_dtype(op, machine_, name_);
  sim::Engine& engine = engine_for(machine_);
  const sim::Mode mode = options.timing_only ? sim::Mode::timing_only : sim::Mode::functional;
  sim::TraceWriter trace;
  outputs_ = TensorValues();

  BackendResult result;
  result.backend = name_;
  result.kind = ResultKind::simulated;
  result.machine = machine_.chip.name;
  sim::Cycles total_cycles = 0, recompute_cycles = 0;
  double engine_wall_s = 0, host_wall_s = 0;

  // Every op planned first: the step's memory (live tensors beside each op) must fit before any runs.
  // A sweep's next repeat of a point reuses its plans (RunOptions::same_graph_as_last_run): a twentieth
  // of a timing-only gather's or scatter's host time.
  if (!options.same_graph_as_last_run || !last_plans_ || plans_read_indices(graph)) {
    last_plans_.reset();
    GraphPlans planned;
    planned.plans = plan_graph(graph, &inputs, planned.op_tile_bytes);
    last_plans_ = std::move(planned);
  }
  const std::vector<OpPlan>& plans = last_plans_->plans;
  const std::vector<std::int64_t>& op_tile_bytes = last_plans_->op_tile_bytes;
  const StepMemory memory = step_memory(graph, op_tile_bytes, machine_);
  check_step_memory(graph, memory, machine_);

  std::vector<bool> written(graph.tensors.size(), false);
  const std::vector<std::ptrdiff_t> last_reader = last_readers(graph);
  for (const Op& op : graph.ops) {
    const auto t0 = Clock::now();
    const auto k = static_cast<std::size_t>(&op - graph.ops.data());
    // Operands: graph inputs from the caller, earlier ops' outputs from this run (functional mode).
    // Timing-only runs need only the index tensors, which shape the programs.
    const auto& indices = op.indices >= 0 ? inputs.i32(op.indices) : no_indices();
    std::optional<IpuMachine> scratch;
    const IpuMachine& machine = machine_for(op, written, last_reader, machine_, scratch);
    const OpPlan& plan = plans[k];
    OpProgram program;
    if (compiled_indices(graph, op)) {
      const bool messages_read_later = last_reader[static_cast<std::size_t>(op.input)] > static_cast<std::ptrdiff_t>(k);
      program = op.kind == OpKind::gather ? build_static_gather_program(op, indices, machine)
                                          : build_static_scatter_program(op, indices, machine, messages_read_later);
    } else {
      program = build_op_program(op, plan, indices, machine, mode);
    }
    load_op(engine, program, op, machine, mode);
    Operands operands;
    if (mode == sim::Mode::functional) {
      operands = resolve_operands(op, inputs, outputs_);
      check_operands(op, operands, "ipu backend");
      // A cast's input is of its own type; every other operand is of the op's.
      write_values(engine, program.input, operands.input, program.input_width,
                   op.kind == OpKind::cast ? op.input_dtype : op.dtype);
      write_pieces(engine, program.indices, indices, 1);
      write_values(engine, program.weight, operands.weight, 1, op.dtype);
      write_values(engine, program.bias, operands.bias, program.bias_width, op.dtype);
      // Loss row weights and Adam's step number are float32 whatever the op's type.
      write_values(engine, program.aux, operands.aux, 1, DType::float32);
    }
    const sim::RunStats stats = engine.run(options.trace_path.empty() ? nullptr : &trace);

    OpResult row = OpResult::for_op(op);
    row.cycles = stats.total_cycles;
    row.time_s = machine_.chip.seconds(stats.total_cycles);
    row.exchange_bytes = stats.exchange_bytes_received;
    row.sync_cycles = stats.sync_cycles;
    row.compute_cycles = stats.compute_cycles;
    row.exchange_cycles = stats.exchange_cycles;
    row.peak_tile_bytes = stats.peak_tile_bytes;
    row.bytes_by_level = {{"tile_sram_read_bytes", program.sram_read_bytes},
                          {"tile_sram_write_bytes", program.sram_write_bytes},
                          {"exchange_bytes", stats.exchange_bytes_received}};
    if (options.plan_details) {
      row.plan = plan.to_json();
      row.plan["simulated"] = stats.to_json();
      row.plan["live_tile_bytes"] = memory.ops[k].live_tile_bytes;
      row.plan["tile_bytes_with_live_tensors"] = memory.ops[k].total();
    }
    if (mode == sim::Mode::functional) {
      std::vector<float> out = read_values(engine, program.output, op.output_rows() * op.output_cols(), program.output_width, op.dtype);
      const auto check = reference::verify(op, operands, out);
      row.verified = check.ok;
      row.verification = check.detail;
      outputs_.set_f32(op.output, std::move(out), op.dtype);
    } else {
      row.verification = "not checked: timing-only run moves no bytes";
    }
    // Recomputation: the forward ops re-run just before this one cost their cycles again, here.
    nlohmann::json recomputed = nlohmann::json::array();
    for (std::size_t r = 0; r < memory.recomputed.size(); ++r) {
      if (memory.recomputed_before[r] != k) continue;
      const OpResult& first_run = result.ops.at(memory.recomputed[r]);
      recomputed.push_back({{"op", first_run.op}, {"cycles", *first_run.cycles}});
      *row.cycles += *first_run.cycles;
      row.time_s += first_run.time_s;
      recompute_cycles += *first_run.cycles;
      total_cycles += *first_run.cycles;
    }
    if (options.plan_details && !recomputed.empty()) row.plan["recomputed_before_this_op"] = recomputed;
    written[static_cast<std::size_t>(op.output)] = true;
    total_cycles += stats.total_cycles;
    engine_wall_s += stats.wall_s;
    host_wall_s += seconds_since(t0);
    result.time_s += row.time_s;
    result.ops.push_back(std::move(row));
  }

  result.cycles = total_cycles;
  result.host = {{"mode", options.timing_only ? "timing-only" : "functional"},
                 {"engine_wall_s", engine_wall_s},
                 {"wall_s", host_wall_s},
                 {"simulated_cycles_per_s", host_wall_s > 0 ? static_cast<double>(total_cycles) / host_wall_s : 0.0},
                 {"tile_clock_hz", machine_.chip.clock_hz},
                 {"machine_file", machine_.file},
                 // The SRAM of the busiest op with every tensor live across it (planning/step_memory.hpp).
                 {"peak_tile_bytes_with_live_tensors", memory.peak_tile_bytes()},
                 {"peak_tile_bytes_at_op", graph.ops.empty() ? std::string() : graph.ops[memory.peak_op].name},
                 {"sram_bytes_per_tile", machine_.chip.sram_bytes_per_tile},
                 {"recompute", {{"enabled", graph.recompute_activations},
                                {"ops_recomputed", memory.recomputed.size()},
                                {"cycles", recompute_cycles}}}};
  if (!options.trace_path.empty()) trace.write(options.trace_path);
  return result;
}

}  // namespace tilesim::ipu
