// Text helpers the families' name grammars and labels share (families.hpp).
#include <cctype>
#include <filesystem>

#include "backends/families.hpp"

namespace tilesim::backends {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string machine_stem(const std::string& machine) {
  if (machine.find('/') != std::string::npos || (machine.size() > 5 && machine.substr(machine.size() - 5) == ".json"))
    return std::filesystem::path(machine).stem().string();
  return machine;
}

std::string upper_case(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace tilesim::backends
