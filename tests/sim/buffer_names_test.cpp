// Program::add_buffer interns each buffer name once (sim/program.hpp): by a scan while a program has
// few names, by a map past kScannedBufferNames. Either way a name keeps the index it was first given.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/program.hpp"

using tilesim::sim::Program;

TEST_CASE("buffer names are interned once, in first-declared order, below and past the scan bound", "[unit]") {
  Program p;
  const std::size_t many = 3 * Program::kScannedBufferNames;
  std::vector<std::string> names;
  for (std::size_t k = 0; k < many; ++k) names.push_back("buffer " + std::to_string(k));
  // Interleaved: each name declared again after others, so neither the last-name shortcut nor
  // declaration order alone can give the right index.
  for (std::size_t k = 0; k < many; ++k) {
    p.add_buffer(names[k], 0, 8);
    p.add_buffer(names[k / 2], 1, 8);
    p.add_buffer(names[0], 2, 8);
  }
  REQUIRE(p.buffer_names == names);
  for (std::size_t k = 0; k < many; ++k) {
    const auto b = static_cast<tilesim::sim::BufferId>(3 * k);
    CHECK(p.name_of(b) == names[k]);
    CHECK(p.name_of(b + 1) == names[k / 2]);
    CHECK(p.name_of(b + 2) == names[0]);
  }
  // Names that share a length, or that prefix one another, stay apart.
  Program q;
  q.add_buffer("ab", 0, 1);
  q.add_buffer("ba", 0, 1);
  q.add_buffer("a", 0, 1);
  q.add_buffer("ab", 0, 1);
  CHECK(q.buffer_names == std::vector<std::string>{"ab", "ba", "a"});
  CHECK(q.buffers[3].name == 0);
}
