// Fuzz target: the index file reader (workloads/workload.hpp, read_index_file), which a workload's
// {"indices": {"file": ...}} runs. The first two bytes of an input are the op's figures, the rest is the
// file: byte 0 the expected count (b + 1; 0xff: 2^31 - 1), byte 1 the index range (b + 1; 0xff: 2^31 - 1),
// so the corpus reaches both small ops and the largest an op may be. Accepted indices must be exactly
// the expected count, each in [0, range).
#include <cstddef>
#include <cstdint>
#include <limits>

#include "tests/fuzz/fuzz_support.hpp"
#include "workloads/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  constexpr std::int64_t max_size = std::numeric_limits<std::int32_t>::max();
  const std::int64_t count = data[0] == 0xff ? max_size : data[0] + 1;
  const std::int64_t range = data[1] == 0xff ? max_size : data[1] + 1;
  const std::string path = tilesim::fuzz::write_scratch_file("indices.txt", data + 2, size - 2);
  // The error names the workload and the JSON path; the workload is a file beside the index file.
  const std::string workload = tilesim::fuzz::scratch_dir() + "/workload.json";
  return tilesim::fuzz::read_expecting_input_errors(path, [&] {
    const auto indices = tilesim::workloads::read_index_file(path, count, range, workload, "ops[0].indices.file");
    if (static_cast<std::int64_t>(indices.size()) != count)
      tilesim::fuzz::finding(std::to_string(indices.size()) + " indices accepted, " + std::to_string(count) + " expected");
    for (std::int32_t i : indices)
      if (i < 0 || i >= range) tilesim::fuzz::finding("index " + std::to_string(i) + " accepted, range " + std::to_string(range));
  });
}
