#include "common/machine_files.hpp"

#include <algorithm>
#include <filesystem>

namespace tilesim {

double FigureReader::number(const std::string& key, double min, double max) {
  ObjectReader figure = section_.object(key);
  const double v = figure.number("value", min, max);
  figure.string("source");
  figure.finish();
  return v;
}

std::int64_t FigureReader::integer(const std::string& key, std::int64_t min, std::int64_t max) {
  ObjectReader figure = section_.object(key);
  const std::int64_t v = figure.integer("value", min, max);
  figure.string("source");
  figure.finish();
  return v;
}

std::vector<std::string> json_file_stems(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool names_a_file(const std::string& name) {
  return name.find('/') != std::string::npos || (name.size() > 5 && name.substr(name.size() - 5) == ".json");
}

}  // namespace tilesim
