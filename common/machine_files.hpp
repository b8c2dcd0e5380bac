#pragma once
// What every machine file (IPU, GPU, CPU) shares: figures written as {"value": ..., "source": "..."},
// so no number enters a model without its provenance, and a directory of shipped files named by stem.
#include <cstdint>
#include <string>
#include <vector>

#include "common/machine_provenance.hpp"
#include "common/strict_json.hpp"

namespace tilesim {

// Reads the figures of one section of a machine file (or of another sourced file, such as the graph
// presets) and records each, with its source, in the machine's provenance when one is given. A bare
// number, a missing source or any other key is an InputError naming the file and JSON path.
class FigureReader {
 public:
  explicit FigureReader(ObjectReader section) : section_(std::move(section)) {}
  FigureReader(ObjectReader section, MachineProvenance& provenance)
      : section_(std::move(section)), provenance_(&provenance) {}
  double number(const std::string& key, double min, double max);
  double positive_number(const std::string& key);
  std::int64_t integer(const std::string& key, std::int64_t min, std::int64_t max);
  // A figure whose value is one of `allowed` words (how a software stack behaves, say), with its source.
  std::string one_of(const std::string& key, const std::vector<std::string>& allowed);
  // A figure whose value is free text (a version, a part name), with its source.
  std::string text(const std::string& key);
  bool has(const std::string& key) const { return section_.has(key); }
  // A nested section of figures ("roofline.peak_flops_per_s"), recorded in the same provenance.
  FigureReader section(const std::string& key) {
    FigureReader nested(section_.object(key));
    nested.provenance_ = provenance_;
    return nested;
  }
  void finish() const { section_.finish(); }

 private:
  // The figure object at `key`, finished once its value is read; records value and source.
  template <class Read>
  auto read(const std::string& key, Read read_value);

  ObjectReader section_;
  MachineProvenance* provenance_ = nullptr;
};

// The stems of the *.json files in `dir`, sorted ("bow", "mk1", ...); empty if it cannot be read.
std::vector<std::string> json_file_stems(const std::string& dir);

// What an unknown machine name is told it could have been: "one of bow, mk2" when `names` (the shipped
// files found in `dir`) has some; when it is empty (no folder, or an empty one), that no machine files
// were found in `dir`, naming `dir_variable`, the environment variable that points tilesim elsewhere.
std::string shipped_names_text(const std::vector<std::string>& names, const std::string& dir, const std::string& dir_variable);

// True when a machine name given by a user is a path to a file rather than a shipped name.
bool names_a_file(const std::string& name);

}  // namespace tilesim
