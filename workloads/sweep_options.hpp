#pragma once
// What every sweep file shares (docs/sweep-format.md): its "name", which names the output folder, and
// the run options "ipu": {"verify"} and "cpu": {"warmup", "timed_calls"}, read strictly from the sweep's
// top-level object.
#include <string>

#include "common/strict_json.hpp"

namespace tilesim::analysis {

struct SweepRunOptions {
  bool ipu_verify = false;  // simulated IPU: functional runs (outputs checked) instead of timing-only
  int cpu_warmup = 0;       // measured CPU: untimed calls per point
  int cpu_timed_calls = 0;  // measured CPU: timed calls per point
};

// "name": 1 to 255 letters, digits, '.', '_' or '-', not "." or ".."; an InputError otherwise.
std::string read_sweep_name(ObjectReader& root);

// Reads "ipu" and "cpu" when present into `options` (whose values are the defaults otherwise).
void read_sweep_run_options(ObjectReader& root, SweepRunOptions& options);

}  // namespace tilesim::analysis
