#pragma once
// One point of a sweep on one backend, as a results.csv row: the point's inputs built the cheapest way
// the backend allows (a model reads no values; a timing-only simulation needs only the indices), the
// backend run, its rows summed into the point's. A point that does not fit the machine is a row too
// (verified = does-not-fit), so --resume does not retry it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/results_table.hpp"
#include "runs/sweep/progress.hpp"
#include "runs/sweep/sweep_backends.hpp"
#include "workloads/sweep_spec.hpp"
#include "workloads/workload.hpp"

namespace tilesim::runs::sweep {

class PointRunner {
 public:
  PointRunner(const analysis::SweepSpec& spec, std::vector<SweepBackendRun>& backends) : spec_(spec), backends_(backends) {}

  analysis::ResultRow run(const analysis::SweepPoint& p);
  // Backend::warm_up of every backend that is not measured: before worker processes are forked.
  void warm_up_simulated();

  // --available-memory-proportion: every point's ops get it (the simulated IPU plans under it).
  void set_available_memory_proportion(std::optional<double> proportion) { proportion_ = proportion; }

  // The message of the last point that did not fit or failed verification.
  const std::string& last_error() const { return last_error_; }

 private:
  RunOptions options_for(const analysis::SweepPoint& p, const SweepBackendRun& b, std::uint64_t seed, analysis::ResultRow& row) const;
  BackendResult run_one_op(const analysis::SweepPoint& p, SweepBackendRun& b, OpKind kind, DType dtype, std::uint64_t seed,
                           const RunOptions& options) const;
  analysis::ResultRow run_group(const analysis::SweepPoint& p, SweepBackendRun& b, std::uint64_t seed, Clock::time_point t0);
  analysis::ResultRow does_not_fit(analysis::ResultRow row, const SweepBackendRun& b, const OpGraph& graph,
                                   Clock::time_point t0, const std::string& message);
  void finish_row(analysis::ResultRow& row, const BackendResult& result, const SweepBackendRun& b, bool name_failing_op);
  workloads::Workload point_workload(const analysis::SweepPoint& p, OpKind kind, DType dtype, std::uint64_t seed) const;

  const analysis::SweepSpec& spec_;
  std::vector<SweepBackendRun>& backends_;
  std::string last_error_;
  std::optional<double> proportion_;
};

}  // namespace tilesim::runs::sweep
