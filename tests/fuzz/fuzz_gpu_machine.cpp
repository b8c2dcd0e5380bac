// Fuzz target: the GPU machine file reader (models/gpu/gpu_machine.hpp), "base" included (a shipped
// machine such as "a100-40gb", or a file relative to this one); the provenance's hash is taken as
// reports do.
#include <cstddef>
#include <cstdint>

#include "models/gpu/gpu_machine.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = tilesim::fuzz::write_scratch_file("gpu.json", data, size);
  return tilesim::fuzz::read_expecting_input_errors(path, [&] {
    const tilesim::gpu::GpuMachine m = tilesim::gpu::load_gpu_machine(path);
    (void)m.provenance.content_hash();
  });
}
