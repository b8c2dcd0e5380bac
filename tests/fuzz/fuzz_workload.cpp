// Fuzz target: the workload reader (workloads/workload.hpp). load_workload parses the file (strict JSON,
// duplicate keys refused), validates every op and the graph, model, train and loader sections, reads the
// index files the ops name and checks the tensors against this host's memory. Nothing is lowered or
// instantiated: the graph is neither generated nor loaded (that is lower(), not called here), so the
// sizes an input states never turn into allocations.
// A workload it accepts must echo (to_json, report.json's copy) as docs/workload-format.md promises:
// without "source_file", an echo whose ops use no index file reads back as the same workload.
// Beside the input lie the shipped index file of workloads/examples/index_file.json and the Cora edge
// list, under the names the seeds use ("index_file.indices.txt", "cora.cites").
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_support.hpp"
#include "workloads/workload.hpp"

namespace {

using namespace tilesim::workloads;

void check_echo(const Workload& w, const std::string& path) {
  nlohmann::json echo = to_json(w);
  (void)echo.dump();
  for (const OpSpec& op : w.ops)
    if (op.indices.distribution == IndexDistribution::file) return;  // echoes "resolved_file": not an input
  echo.erase("source_file");
  nlohmann::json again;
  try {
    again = to_json(parse_workload(echo, path));
  } catch (const tilesim::Error& e) {
    tilesim::fuzz::finding(std::string("the echo is not a valid workload: ") + e.what() + "\necho: " + echo.dump());
  }
  again.erase("source_file");
  if (again != echo) tilesim::fuzz::finding("the echo reads back as another workload:\n" + echo.dump() + "\n" + again.dump());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool companions = [] {
    const std::string source = TILESIM_SOURCE_DIR;
    tilesim::fuzz::copy_to_scratch_dir(source + "/workloads/examples/index_file.indices.txt", "index_file.indices.txt");
    tilesim::fuzz::copy_to_scratch_dir(source + "/workloads/data/cora/cora.cites", "cora.cites");
    return true;
  }();
  (void)companions;
  const std::string path = tilesim::fuzz::write_scratch_file("workload.json", data, size);
  return tilesim::fuzz::read_expecting_input_errors(path, [&] { check_echo(load_workload(path), path); });
}
