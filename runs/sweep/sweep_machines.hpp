#pragma once
// machines.json beside a sweep's results.csv: which tilesim wrote the rows (version and git revision)
// and, per backend, the resolved machine it modeled (every figure with its source and file, the files
// read, the content hash), so a row can be traced to the exact machine behind it after a refit.
#include <string>
#include <vector>

#include "results/backend.hpp"

namespace tilesim::runs::sweep {

// Writes OUT_DIR/machines.json (through a temporary file): {"tool": {...}, "backends": [{"backend":
// NAME, "machine_provenance": {...} or null for a backend without a machine file}]}.
void write_sweep_machines(const std::string& out_dir, const std::vector<const Backend*>& backends);

}  // namespace tilesim::runs::sweep
