#include "common/text_file.hpp"

#include <filesystem>
#include <fstream>
#include <vector>

#include "common/error.hpp"

namespace tilesim {

std::string read_text_file(const std::string& path, const TextBounds& bounds, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, "", what, "a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", what, "no such file or it cannot be read");
  std::string text;
  std::vector<char> block(1 << 16);
  std::int64_t line_bytes = 0, line = 1;
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    for (std::size_t i = 0; i < got; ++i) {
      if (block[i] == '\n') {
        line_bytes = 0;
        ++line;
      } else if (++line_bytes > bounds.max_line_bytes) {
        throw InputError(path + ":" + std::to_string(line), "", what + " with lines of at most " + std::to_string(bounds.max_line_bytes) + " bytes",
                         "a longer line");
      }
    }
    if (static_cast<std::int64_t>(text.size() + got) > bounds.max_bytes)
      throw InputError(path, "", what + " of at most " + std::to_string(bounds.max_bytes >> 20) + " MiB", "a larger file");
    text.append(block.data(), got);
  }
  if (in.bad()) throw InputError(path, "", what, "a read error");
  return text;
}

std::string quoted_excerpt(std::string_view text, std::size_t max_chars) {
  static const char* const hex = "0123456789abcdef";
  std::string out = "\"";
  for (const char c : text.substr(0, max_chars)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  if (text.size() > max_chars) out += "...";
  return out + "\"";
}

}  // namespace tilesim
