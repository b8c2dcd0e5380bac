#pragma once
// A saved baseline for benchmarks whose speed is tracked over time (the simulator's): each benchmark's
// wall seconds per call, with the host it was measured on. After a run, every benchmark that is in the
// baseline is printed beside it with the change, so a slower simulator shows up in `make bench-sim`.
// Times are host-dependent: compare on the kind of host the baseline names, and read the simulated
// benchmarks together with the native kernel measured in the same run.
#include <map>
#include <string>
#include <vector>

namespace tilesim::bench {

struct BaselineEntry {
  std::string name;
  double seconds_per_call = 0;
};

// Reads FILE (written by save_baseline); throws tilesim::InputError naming the file and JSON path.
std::map<std::string, double> load_baseline(const std::string& path);

// Writes the entries, with the host's CPU model and the UTC time, through a temporary file.
void save_baseline(const std::string& path, const std::vector<BaselineEntry>& entries);

// The comparison table: name, baseline, this run, change in percent (> 0: slower now). Benchmarks
// missing on either side are listed as such.
std::string baseline_table(const std::map<std::string, double>& baseline, const std::vector<BaselineEntry>& now,
                           const std::string& baseline_path);

}  // namespace tilesim::bench
