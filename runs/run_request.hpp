#pragma once
// What a caller asks of a run: a resolved workload, the backends to run it on and the options, as typed
// values. The command line (apps/run_command.cpp), the Python module and the published suites fill
// one in and read back a RunResult (runs/run_result.hpp); none of them goes through text.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend_spec.hpp"
#include "common/defaults.hpp"
#include "ir/op_graph.hpp"
#include "ir/tensor_values.hpp"
#include "workloads/workload.hpp"

namespace tilesim::runs {

struct RunRequest {
  workloads::Workload workload;
  std::string workload_file;                  // names the workload in messages (the file, or a caller's name for it)
  std::vector<backends::BackendSpec> backends;
  std::string backends_text;                  // the list as the caller wrote it, echoed in the report's options
  std::optional<std::uint64_t> seed;          // replaces the workload's
  std::optional<double> available_memory_proportion;  // simulated IPU: every op's default, in (0, 1]
  bool timing_only = false;
  int warmup = defaults::warmup_calls;
  int repeats = defaults::timed_calls;
  std::optional<std::int64_t> steps;          // a training workload: replaces train.steps
  std::optional<std::int64_t> batches;        // a loader workload: replaces loader.batches (default one epoch)
  std::string trace_path;                     // "": none; else the simulated backends' trace (one per machine)
  bool progress = true;                       // a line on standard error per backend, step or tenth of the batches
  bool lead = true;                           // under mpirun, rank 0: it alone writes traces and speaks

  // Called once the request is checked and the backends are made, before any work: where a caller
  // creates the folders it will write to, so bad input leaves nothing behind.
  std::function<void()> ready;
  // Called once the inputs are generated, before any backend runs: may overwrite graph inputs. Refused
  // for a workload with a loader or a parallel section, whose inputs are made batch by batch.
  std::function<void(const OpGraph&, TensorValues&)> set_inputs;
  // Called after each backend that computes values (a training run: its first step's).
  std::function<void(const std::string& backend, const OpGraph&, const TensorValues&)> outputs;
};

}  // namespace tilesim::runs
