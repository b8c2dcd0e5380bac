#pragma once
// report.json: tool version, the resolved workload, one entry per backend, and cross-backend checks.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/result.hpp"

namespace tilesim::cli {

// Writes `text` to `path` through a temporary file and a rename, so an existing file is never left
// half-written. Throws InputError naming the path if it cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

// The short table `tilesim run` prints: one line per op and backend.
std::string format_table(const std::vector<BackendResult>& results);

// "1.23 us", "45.6 ms": a time with a unit people read at a glance.
std::string format_time(double seconds);

}  // namespace tilesim::cli
