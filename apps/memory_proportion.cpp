#include "apps/memory_proportion.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "common/error.hpp"

namespace tilesim::cli {

std::optional<double> parse_memory_proportion_option(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const std::string expected = "a number greater than 0 and at most 1 (the share of a tile's SRAM an op's temporaries may use)";
  errno = 0;
  char* end = nullptr;
  const double p = std::strtod(text.c_str(), &end);
  const bool whole = end && *end == '\0' && end != text.c_str() && !std::isspace(static_cast<unsigned char>(text.front()));
  if (!whole || errno == ERANGE || !std::isfinite(p) || !(p > 0) || p > 1)
    throw InputError("", "--available-memory-proportion", expected, "\"" + text + "\"");
  return p;
}

}  // namespace tilesim::cli
