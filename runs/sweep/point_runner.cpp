#include "runs/sweep/point_runner.hpp"

#include <algorithm>
#include <tuple>

#include "analysis/intensity.hpp"
#include "common/error.hpp"
#include "workloads/validation_suite.hpp"

namespace tilesim::runs::sweep {

using analysis::ResultRow;
using analysis::SweepPoint;

namespace {

// Points whose one-op graphs are equal: the same op, dtype and every field of the shape.
bool same_graph(const SweepPoint& a, const SweepPoint& b) {
  static_assert(sizeof(OpShape) == 7 * sizeof(std::int64_t), "same_graph compares every OpShape field");
  const auto fields = [](const OpShape& s) {
    return std::tie(s.num_inputs, s.num_features, s.num_outputs, s.out_features, s.num_segments, s.other_rows, s.other_groups);
  };
  return a.op == b.op && a.dtype == b.dtype && fields(a.shape) == fields(b.shape);
}

OpGraph one_op_graph(const SweepPoint& p, OpKind kind, DType dtype, std::optional<double> proportion) {
  OpGraph graph;
  graph.add_gather_scatter(p.op, kind, dtype, p.shape);
  if (proportion) graph.ops.front().available_memory_proportion = *proportion;
  return graph;
}

// Whether the backend's rows passed their checks, and the first failure, "op: why".
struct Checks {
  bool all_checked = true, all_ok = true;
  std::string failure;
};

// What a measured backend's guarded timing said of its rows (kernels/cpu/guarded_timing.hpp): the
// fewest threads any op ran on, the team they would have used, and each disturbed op's reason ("op:
// why" when the point has several ops). Rows without those keys (simulated, modeled, unguarded) leave
// the columns empty.
void add_disturbance(ResultRow& row, const BackendResult& result) {
  for (const OpResult& o : result.ops) {
    if (!o.timing.is_object()) continue;
    if (const auto t = o.timing.find("threads"); t != o.timing.end() && t->is_number_integer())
      row.threads = row.threads ? std::min(*row.threads, t->get<int>()) : t->get<int>();
    if (const auto t = o.timing.find("team_threads"); t != o.timing.end() && t->is_number_integer())
      row.team_threads = row.team_threads ? std::max(*row.team_threads, t->get<int>()) : t->get<int>();
    const auto d = o.timing.find("disturbed");
    if (d == o.timing.end() || !d->is_string() || d->get<std::string>().empty()) continue;
    const std::string why = result.ops.size() > 1 ? o.op + ": " + d->get<std::string>() : d->get<std::string>();
    row.disturbed += (row.disturbed.empty() ? "" : "; ") + why;
  }
}

// The point's totals over the backend's rows: time, cycles (when every op has them), FLOPs, minimum
// bytes and bytes by level.
Checks add_totals(ResultRow& row, const BackendResult& result, const std::string& backend_name) {
  Checks checks;
  double time_s = 0;
  bool all_cycles = true;
  std::int64_t cycles = 0;
  for (const OpResult& o : result.ops) {
    time_s += o.time_s;
    row.flops += o.flops;
    row.min_bytes += o.min_bytes;
    if (o.cycles) cycles += *o.cycles;
    else all_cycles = false;
    for (const auto& [level, bytes] : o.bytes_by_level.items()) {
      const auto& known = analysis::byte_level_columns();
      if (std::find(known.begin(), known.end(), level) == known.end())
        throw Error(ExitCode::internal_error, backend_name + " reports bytes at level \"" + level +
                                                  "\", which results.csv has no column for (analysis/results_table.cpp)");
      row.bytes[level] += bytes.get<std::int64_t>();
    }
    if (o.verified) {
      checks.all_ok = checks.all_ok && *o.verified;
      if (!*o.verified && checks.failure.empty()) checks.failure = o.op + ": " + o.verification;
    } else {
      checks.all_checked = false;
    }
  }
  row.time_s = time_s;
  if (all_cycles) row.cycles = cycles;
  add_disturbance(row, result);
  return checks;
}

}  // namespace

void PointRunner::warm_up_simulated() {
  for (SweepBackendRun& b : backends_)
    if (!b.measured) b.backend->warm_up();
}

ResultRow PointRunner::run(const SweepPoint& p) {
  const auto t0 = Clock::now();
  SweepBackendRun& b = backends_[p.backend];
  const std::uint64_t seed = analysis::sweep_index_seed(p.shape, spec_.seed, p.repeat);
  if (p.op == "schnet_block") return run_group(p, b, seed, t0);
  const OpKind kind = p.op == "gather" ? OpKind::gather : OpKind::scatter_add;
  const DType dtype = *dtype_from_string(p.dtype);

  ResultRow row;
  const RunOptions options = options_for(p, b, seed, row);
  BackendResult result;
  try {
    result = run_one_op(p, b, kind, dtype, seed, options);
  } catch (const PlanError& e) {
    return does_not_fit(row, b, one_op_graph(p, kind, dtype, proportion_), t0, e.what());
  }
  if (result.ops.size() != 1) throw Error(ExitCode::internal_error, b.name + " returned " + std::to_string(result.ops.size()) + " rows for one op");
  finish_row(row, result, b, false);
  row.wall_s = seconds_since(t0);
  return row;
}

// The row fields every point shares: identity, kind and mode.
RunOptions PointRunner::options_for(const SweepPoint& p, const SweepBackendRun& b, std::uint64_t seed, ResultRow& row) const {
  row.op = p.op;
  row.shape = p.shape;
  row.dtype = p.dtype;
  row.backend = b.name;
  row.repeat = p.repeat;
  row.index_seed = seed;
  RunOptions options;
  options.warmup = b.timing.warmup;
  options.repeats = b.timing.timed_calls;
  options.timing_only = b.timing.timing_only;
  options.plan_details = false;  // a results.csv row has no plan column
  row.mode = b.spec.descriptor->row_mode(b.spec, b.timing);
  row.kind = to_string(b.spec.descriptor->kind());
  return options;
}

BackendResult PointRunner::run_one_op(const SweepPoint& p, SweepBackendRun& b, OpKind kind, DType dtype, std::uint64_t seed,
                                      const RunOptions& options) const {
  if (!b.spec.descriptor->info().reads_input_values) {
    // A model reads no values.
    const OpGraph graph = one_op_graph(p, kind, dtype, proportion_);
    b.backend->prepare(graph);
    return b.backend->run(graph, TensorValues{}, options);
  }
  if (options.timing_only) {
    // Timing-only: the indices alone (the cycles depend on them), drawn as a one-op workload with
    // this seed would draw them, without generating the values nobody reads.
    const OpGraph graph = one_op_graph(p, kind, dtype, proportion_);
    const Op& op = graph.ops.front();
    auto indices = analysis::point_indices(op, seed);
    if (spec_.indices == "sorted") std::sort(indices.begin(), indices.end());
    TensorValues values;
    values.set_i32(op.indices, std::move(indices));
    // The graph follows the point's op, shape and dtype (and the runner's fixed proportion): the next
    // repeat of the last point has the same one.
    RunOptions repeat_options = options;
    repeat_options.same_graph_as_last_run = b.last_timing_point && same_graph(*b.last_timing_point, p);
    b.last_timing_point = p;
    return b.backend->run(graph, values, repeat_options);
  }
  b.last_timing_point.reset();
  const workloads::Instance instance = workloads::instantiate(point_workload(p, kind, dtype, seed));
  return b.backend->run(instance.graph, instance.values, options);
}

// A point that lowers to a group of ops (schnet_block): one row whose time, cycles, FLOPs and bytes
// are the group's totals, verified when every op was.
ResultRow PointRunner::run_group(const SweepPoint& p, SweepBackendRun& b, std::uint64_t seed, Clock::time_point t0) {
  ResultRow row;
  const RunOptions options = options_for(p, b, seed, row);
  // The block's kind and index distribution are unused: it draws its own edges.
  workloads::Workload w = point_workload(p, OpKind::gather, *dtype_from_string(p.dtype), seed);
  w.ops.front().schnet_block = true;
  BackendResult result;
  OpGraph graph;
  b.last_timing_point.reset();
  try {
    if (!b.spec.descriptor->info().reads_input_values) {
      graph = workloads::build_graph(w);  // a model reads no values
      b.backend->prepare(graph);
      result = b.backend->run(graph, TensorValues{}, options);
    } else {
      // The edge indices decide the cycles, so even timing-only runs need the generated inputs.
      workloads::Instance instance = workloads::instantiate(w);
      graph = instance.graph;
      result = b.backend->run(instance.graph, instance.values, options);
    }
  } catch (const PlanError& e) {
    if (graph.ops.empty()) graph = workloads::build_graph(w);
    return does_not_fit(row, b, graph, t0, e.what());
  }
  if (result.ops.size() != graph.ops.size())
    throw Error(ExitCode::internal_error, b.name + " returned " + std::to_string(result.ops.size()) + " rows for " +
                                              std::to_string(graph.ops.size()) + " ops of a schnet_block");
  finish_row(row, result, b, true);
  row.wall_s = seconds_since(t0);
  return row;
}

// The point does not fit the machine: recorded (so --resume does not retry it) and reported.
ResultRow PointRunner::does_not_fit(ResultRow row, const SweepBackendRun& b, const OpGraph& graph, Clock::time_point t0,
                                    const std::string& message) {
  row.machine = b.spec.descriptor->machine_name(*b.backend);
  row.machine_hash = b.machine_hash;
  row.verified = "does-not-fit";
  for (const Op& o : graph.ops) {
    row.flops += o.flops();
    row.min_bytes += o.min_bytes();
  }
  row.wall_s = seconds_since(t0);
  last_error_ = message;
  return row;
}

// The machine, totals, intensity and verified of a point the backend ran. `name_failing_op`: a
// verification failure names the op of the group it happened in.
void PointRunner::finish_row(ResultRow& row, const BackendResult& result, const SweepBackendRun& b, bool name_failing_op) {
  row.machine = result.machine;
  row.machine_hash = b.machine_hash;
  const Checks checks = add_totals(row, result, b.name);
  row.intensity_level = analysis::main_level(row);
  for (const auto& t : analysis::traffic_by_level(row))
    if (t.level == row.intensity_level) row.intensity_flops_per_byte = t.intensity_flops_per_byte;
  if (!checks.all_ok) row.verified = "no";
  else if (checks.all_checked) row.verified = "yes";
  else row.verified = b.spec.descriptor->info().unchecked_verified;
  if (row.verified != "no") return;
  if (!name_failing_op) last_error_ = result.ops.front().verification;
  else last_error_ = checks.failure.empty() ? "outputs not checked" : checks.failure;
}

workloads::Workload PointRunner::point_workload(const SweepPoint& p, OpKind kind, DType dtype, std::uint64_t seed) const {
  workloads::Workload w;
  w.name = "sweep_point";
  w.seed = seed;
  w.available_memory_proportion = proportion_;
  workloads::OpSpec op;
  op.name = p.op;
  op.kind = kind;
  op.dtype = dtype;
  op.shape = p.shape;
  op.indices.distribution =
      spec_.indices == "sorted" ? workloads::IndexDistribution::sorted : workloads::IndexDistribution::uniform;
  w.ops.push_back(op);
  return w;
}

}  // namespace tilesim::runs::sweep
