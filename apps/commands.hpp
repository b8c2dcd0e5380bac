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

struct ValidateArgs {
  std::string suite = "hydronet";
  bool json = false;
  std::string out_dir;  // default out/validation/
  bool plots = true;
};

struct CalibrateArgs {
  std::string gpu;       // GPU machine name or file to fit
  std::string ipu;       // or an IPU machine name or file to fit
  std::string data_dir;  // default: the shipped validation/hydronet-gnn/a100/
  bool write = false;    // store the fitted figures in the machine file(s)
  bool json = false;
};

int run_command(const RunArgs& args);
int calibrate_command(const CalibrateArgs& args);
int calibrate_ipu_command(const CalibrateArgs& args);
int validate_command(const ValidateArgs& args);
int machines_command(bool json);
std::string version_text();

}  // namespace tilesim::cli
