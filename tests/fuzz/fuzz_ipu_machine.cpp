// Fuzz target: the IPU machine file reader (models/ipu/machine/machine_file.hpp), with what it follows:
// "base" (a shipped machine such as "bow", or a file relative to this one, this file included: a
// cycle) and "chip_file" (an IPU system's chip file); the provenance's hash is taken as reports do.
// The shipped bow.json lies beside the input, so the shipped system bow-2000.json (chip_file "bow.json")
// reads as it is and inputs may name "bow.json" as a chip file or base.
#include <cstddef>
#include <cstdint>

#include "models/ipu/machine/machine_file.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool companions =
      (tilesim::fuzz::copy_to_scratch_dir(tilesim::ipu::ipu_machine_dir() + "/bow.json", "bow.json"), true);
  (void)companions;
  const std::string path = tilesim::fuzz::write_scratch_file("ipu.json", data, size);
  return tilesim::fuzz::read_expecting_input_errors(path, [&] {
    const tilesim::ipu::IpuMachine m = tilesim::ipu::load_ipu_machine(path);
    (void)m.provenance.content_hash();
  });
}
