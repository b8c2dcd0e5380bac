#include "models/ipu/ipu_backend.hpp"

#include <algorithm>
#include <chrono>

#include "kernels/reference/reference.hpp"
#include "models/ipu/op_program.hpp"
#include "models/ipu/tensor_io.hpp"
#include "models/ipu/plan.hpp"

namespace tilesim::ipu {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

sim::Engine& engine_for(const IpuMachine& machine) {
  static const std::int32_t shipped_max = [] {
    std::int32_t most = 0;
    for (const auto& name : shipped_ipu_machines()) most = std::max(most, load_ipu_machine(name).chip.num_tiles);
    return most;
  }();
  return sim::Engine::instance(std::max(shipped_max, machine.chip.num_tiles));
}

OpTiming simulate_op_timing(const Op& op, const std::vector<std::int32_t>& indices, const IpuMachine& machine) {
  sim::Engine& engine = engine_for(machine);
  OpTiming t;
  t.plan = plan_op(op, machine);
  const OpProgram program = build_op_program(op, t.plan, indices, machine);
  engine.load(program.program, machine.chip, sim::Mode::timing_only);
  t.stats = engine.run();
  t.time_s = machine.chip.seconds(t.stats.total_cycles);
  return t;
}

IpuBackend::IpuBackend(IpuMachine machine, std::string name) : machine_(std::move(machine)), name_(std::move(name)) {}

void IpuBackend::prepare(const OpGraph& graph) {
  for (const Op& op : graph.ops) plan_op(op, machine_);
}

BackendResult IpuBackend::run(const OpGraph& graph, const TensorValues& inputs, const RunOptions& options) {
  sim::Engine& engine = engine_for(machine_);
  const sim::Mode mode = options.timing_only ? sim::Mode::timing_only : sim::Mode::functional;
  sim::TraceWriter trace;
  outputs_ = TensorValues();

  BackendResult result;
  result.backend = name_;
  result.kind = ResultKind::simulated;
  result.machine = machine_.chip.name;
  sim::Cycles total_cycles = 0;
  double engine_wall_s = 0, host_wall_s = 0;

  for (const Op& op : graph.ops) {
    const auto t0 = Clock::now();
    const auto& indices = inputs.i32(op.indices);
    const OpPlan plan = plan_op(op, machine_);
    const OpProgram program = build_op_program(op, plan, indices, machine_);
    engine.load(program.program, machine_.chip, mode);
    if (mode == sim::Mode::functional) {
      write_pieces(engine, program.input, inputs.f32(op.input), program.input_width);
      write_pieces(engine, program.indices, indices, 1);
    }
    const sim::RunStats stats = engine.run(options.trace_path.empty() ? nullptr : &trace);

    OpResult row;
    row.op = op.name;
    row.op_kind = op.kind;
    row.shape = op.shape;
    row.dtype = op.dtype;
    row.cycles = stats.total_cycles;
    row.time_s = machine_.chip.seconds(stats.total_cycles);
    row.flops = op.flops();
    row.min_bytes = op.min_bytes();
    row.exchange_bytes = stats.exchange_bytes_received;
    row.sync_cycles = stats.sync_cycles;
    row.compute_cycles = stats.compute_cycles;
    row.exchange_cycles = stats.exchange_cycles;
    row.peak_tile_bytes = stats.peak_tile_bytes;
    row.bytes_by_level = {{"tile_sram_read_bytes", program.sram_read_bytes},
                          {"tile_sram_write_bytes", program.sram_write_bytes},
                          {"exchange_bytes", stats.exchange_bytes_received}};
    row.plan = plan.to_json();
    row.plan["simulated"] = stats.to_json();
    if (mode == sim::Mode::functional) {
      std::vector<float> out(static_cast<std::size_t>(op.shape.num_outputs * op.shape.num_features));
      read_pieces(engine, program.output, out, program.output_width);
      const auto check = kernels::reference::verify(op, inputs, out);
      row.verified = check.ok;
      row.verification = check.detail;
      outputs_.set_f32(op.output, std::move(out));
    } else {
      row.verification = "not checked: timing-only run moves no bytes";
    }
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
                 {"machine_file", machine_.file}};
  if (!options.trace_path.empty()) trace.write(options.trace_path);
  return result;
}

}  // namespace tilesim::ipu
