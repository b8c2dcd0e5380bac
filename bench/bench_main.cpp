// Google Benchmark's main, with the peer table printed after the usual console output, and the
// simulator-speed baseline: --tilesim_baseline=FILE prints each benchmark's change against a saved
// baseline, --tilesim_save_baseline=FILE stores this run as one (bench/baseline.hpp; `make bench-sim`).
#include <benchmark/benchmark.h>

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "bench/baseline.hpp"
#include "bench/peer_table.hpp"
#include "common/error.hpp"

namespace {

// The peer table's reporter, also keeping every benchmark's seconds per call for the baseline.
class BenchReporter : public tilesim::bench::PeerTableReporter {
 public:
  BenchReporter(std::string compare_path, std::string save_path)
      : compare_path_(std::move(compare_path)), save_path_(std::move(save_path)) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    PeerTableReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred || run.iterations == 0) continue;
      const bool aggregate = run.run_type == Run::RT_Aggregate;
      if (aggregate ? run.aggregate_name != "median" : run.repetitions > 1) continue;  // the median only
      runs_.push_back({run.run_name.str(), run.real_accumulated_time / static_cast<double>(run.iterations)});
    }
  }

  void Finalize() override {
    PeerTableReporter::Finalize();
    if (!compare_path_.empty()) {
      std::cout << tilesim::bench::baseline_table(tilesim::bench::load_baseline(compare_path_), runs_, compare_path_);
    }
    if (!save_path_.empty()) {
      tilesim::bench::save_baseline(save_path_, runs_);
      std::cout << "\nbaseline saved: " << save_path_ << " (" << runs_.size() << " benchmarks)\n";
    }
  }

 private:
  std::string compare_path_, save_path_;
  std::vector<tilesim::bench::BaselineEntry> runs_;
};

// Removes --NAME=VALUE from argv (Google Benchmark rejects flags it does not know) and returns VALUE.
std::string take_flag(int& argc, char** argv, const std::string& name) {
  const std::string prefix = "--" + name + "=";
  std::string value;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) value = argv[i] + prefix.size();
    else argv[kept++] = argv[i];
  }
  argc = kept;
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string compare_path = take_flag(argc, argv, "tilesim_baseline");
  const std::string save_path = take_flag(argc, argv, "tilesim_save_baseline");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  try {
    if (!compare_path.empty()) tilesim::bench::load_baseline(compare_path);  // a bad file fails before the runs
    BenchReporter reporter(compare_path, save_path);
    benchmark::RunSpecifiedBenchmarks(&reporter);
  } catch (const tilesim::Error& e) {
    std::cerr << "tilesim_bench: " << e.what() << "\n";
    return static_cast<int>(e.code());
  }
  benchmark::Shutdown();
  return 0;
}
