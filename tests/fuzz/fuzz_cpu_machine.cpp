// Fuzz target: the CPU machine file reader (models/cpu/cpu_machine.hpp), the files `tilesim calibrate`
// writes (with to_json) and `tilesim roofline --machine cpu:FILE` reads. A machine it accepts must write
// out as a file that reads back as the same machine.
#include <cstddef>
#include <cstdint>

#include "models/cpu/cpu_machine.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilesim::cpu_model;
  const std::string path = tilesim::fuzz::write_scratch_file("cpu.json", data, size);
  return tilesim::fuzz::read_expecting_input_errors(path, [&] {
    const nlohmann::json written = to_json(load_cpu_machine(path));
    nlohmann::json again;
    try {
      again = to_json(parse_cpu_machine(written, path));
    } catch (const tilesim::Error& e) {
      tilesim::fuzz::finding(std::string("the machine as written does not read back: ") + e.what() + "\n" + written.dump());
    }
    if (again != written) tilesim::fuzz::finding("the machine as written reads back as another:\n" + written.dump() + "\n" + again.dump());
  });
}
