#pragma once
// What every machine file (IPU, GPU, CPU) shares: figures written as {"value": ..., "source": "..."},
// so no number enters a model without its provenance, and a directory of shipped files named by stem.
#include <cstdint>
#include <string>
#include <vector>

#include "common/strict_json.hpp"

namespace tilesim {

// Reads the figures of one section of a machine file. A bare number, a missing source or any other
// key is an InputError naming the file and JSON path.
class FigureReader {
 public:
  explicit FigureReader(ObjectReader section) : section_(std::move(section)) {}
  double number(const std::string& key, double min, double max);
  std::int64_t integer(const std::string& key, std::int64_t min, std::int64_t max);
  void finish() const { section_.finish(); }

 private:
  ObjectReader section_;
};

// The stems of the *.json files in `dir`, sorted ("bow", "mk1", ...); empty if it cannot be read.
std::vector<std::string> json_file_stems(const std::string& dir);

// True when a machine name given by a user is a path to a file rather than a shipped name.
bool names_a_file(const std::string& name);

}  // namespace tilesim
