#include "common/machine_files.hpp"

#include <algorithm>
#include <filesystem>

#include "common/error.hpp"

namespace tilesim {

template <class Read>
auto FigureReader::read(const std::string& key, Read read_value) {
  // A bare number is the likeliest mistake: the message shows the form a figure takes.
  if (section_.has(key) && !section_.value(key).is_object())
    throw InputError(section_.file(), section_.path_of(key), "a figure {\"value\": NUMBER, \"source\": \"where it came from\"}",
                     describe_json(section_.value(key)));
  ObjectReader figure = section_.object(key);
  const auto v = read_value(figure);
  const std::string source = figure.string("source");
  figure.finish();
  if (provenance_) provenance_->record(section_.path_of(key), v, source);
  return v;
}

double FigureReader::number(const std::string& key, double min, double max) {
  return read(key, [&](ObjectReader& f) { return f.number("value", min, max); });
}

double FigureReader::positive_number(const std::string& key) {
  return read(key, [](ObjectReader& f) { return f.positive_number("value"); });
}

std::int64_t FigureReader::integer(const std::string& key, std::int64_t min, std::int64_t max) {
  return read(key, [&](ObjectReader& f) { return f.integer("value", min, max); });
}

std::string FigureReader::one_of(const std::string& key, const std::vector<std::string>& allowed) {
  return read(key, [&](ObjectReader& f) { return f.one_of("value", allowed); });
}

std::string FigureReader::text(const std::string& key) {
  return read(key, [](ObjectReader& f) { return f.string("value"); });
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

std::string shipped_names_text(const std::vector<std::string>& names, const std::string& dir, const std::string& dir_variable) {
  if (names.empty()) {
    return "a shipped machine name, but no machine files (*.json) were found in " + dir +
           " (where tilesim looks; set " + dir_variable + " to another folder),";
  }
  std::string text = "one of";
  for (std::size_t i = 0; i < names.size(); ++i) text += (i ? ", " : " ") + names[i];
  return text;
}

bool names_a_file(const std::string& name) {
  return name.find('/') != std::string::npos || (name.size() > 5 && name.substr(name.size() - 5) == ".json");
}

}  // namespace tilesim
