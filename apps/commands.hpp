#pragma once
// The tilesim subcommands. Each returns the process exit code; errors are thrown as tilesim::Error
// and turned into exit codes by main().
#include <cstdint>
#include <optional>
#include <string>

namespace tilesim::cli {

struct RunArgs {
  std::string workload;
  std::string backends = "ipu,cpu";
  std::string out_dir;        // default out/<workload name>/
  bool json = false;
  std::string trace;
  bool timing_only = false;
  std::optional<std::uint64_t> seed;
  int warmup = 2;
  int repeats = 10;
};

int run_command(const RunArgs& args);
int machines_command(bool json);
std::string version_text();

}  // namespace tilesim::cli
