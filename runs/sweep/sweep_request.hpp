#pragma once
// What a caller asks of a sweep (docs/sweep-format.md): the sweep file and how to run its points, as
// typed values. `tilesim sweep` fills one in from its options (apps/sweep_command.cpp).
#include <cstdint>
#include <optional>
#include <string>

namespace tilesim::runs::sweep {

struct SweepRequest {
  std::string sweep;                      // the sweep file
  std::string out_dir;                    // "" : out/<sweep name>/
  // Worker processes for the simulated and modeled points; 0: the default, the cores this process may
  // run on for a sweep of op points in one process (default_jobs), 1 for a workload sweep or per MPI rank.
  int jobs = 0;
  bool resume = false;                    // skip points already in results.csv
  bool overwrite = false;                 // start a new results.csv even if one exists
  std::optional<std::string> backends;    // replaces the sweep file's backends (comma-separated)
  bool verify = false;                    // simulated IPU: functional runs, outputs checked
  std::int64_t stop_after = 0;            // for tests: stop (as if killed) after this many new points; 0: run all
  std::optional<double> available_memory_proportion;  // simulated IPU: every point's proportion, in (0, 1]
};

}  // namespace tilesim::runs::sweep
