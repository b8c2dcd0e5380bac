#pragma once
// A machine's roofline ceilings, as a backend family declares them (machine_ceilings.hpp) and the
// analysis layer draws them (analysis/roofline.hpp).
#include <string>
#include <vector>

namespace tilesim::backends {

struct Ceiling {
  bool compute = false;   // true: FLOP/s for a dtype; false: bytes/s at a memory level
  std::string name;       // compute: the dtype ("float32", "float16"); bandwidth: the level ("hbm", "tile_sram")
  std::string label;      // as the legend shows it: "HBM", "fp32 (AMP)", "DRAM random gather"
  double value = 0;       // FLOP/s or bytes/s
  std::string source;     // where the figure comes from (machine file and its source text)
  bool secondary = false; // drawn dashed: a second ceiling at the same level (random-access gather bandwidth)
};

struct RooflineMachine {
  std::string backend;               // the backend whose rows are drawn ("ipu:bow")
  std::string title;                 // "Bow IPU (simulated)"
  std::vector<std::string> files;    // machine files the ceilings were read from
  std::vector<Ceiling> ceilings;
  std::vector<std::string> notes;    // what is missing or assumed, printed and written beside the figure
};

}  // namespace tilesim::backends
