// Fuzz target: the graph file loader for an edge list (SRC DST per line) (workloads/graphs/loaders.hpp),
// load_edge_list, as a workload's {"graph": {"file": ...}} runs it. A graph it accepts must be well formed
// (graph_checks.hpp).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/graph_checks.hpp"
#include "workloads/graphs/loaders.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = tilesim::fuzz::write_scratch_file("graph.txt", data, size);
  return tilesim::fuzz::read_expecting_input_errors(path, [&] {
    tilesim::fuzz::check_edge_list(tilesim::workloads::graphs::load_edge_list(path));
  });
}
