// Fuzz target: the sweep reader (workloads/sweep_spec.hpp): load_sweep parses and validates the file,
// its axes (lists and ranges), backend subsets and options; the resolved echo is built from the result.
// The points are counted (parse_sweep refuses more than 10^7) but not expanded.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_support.hpp"
#include "workloads/sweep_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = tilesim::fuzz::write_scratch_file("sweep.json", data, size);
  return tilesim::fuzz::read_expecting_input_errors(path, [&] {
    const tilesim::analysis::SweepSpec s = tilesim::analysis::load_sweep(path);
    (void)tilesim::analysis::to_json(s).dump();
  });
}
