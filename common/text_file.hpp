#pragma once
// Reading a whole text file with bounds, for the readers that parse from memory (results.csv, the
// validation CSVs): a file larger than a bound, or with a line longer than one (a file without line
// ends, /dev/zero), is refused once the bound is passed rather than read whole into memory.
#include <cstdint>
#include <string>
#include <string_view>

namespace tilesim {

struct TextBounds {
  std::int64_t max_bytes;       // the whole file
  std::int64_t max_line_bytes;  // one line, its line end excluded
};

// The file's text; InputError (exit 2) naming the file when it is missing, a directory, unreadable,
// or over a bound. `what` names the file for the message ("a results.csv written by tilesim sweep").
std::string read_text_file(const std::string& path, const TextBounds& bounds, const std::string& what);

// A piece of a file's text as a message quotes it: in double quotes, cut after `max_chars` with
// "...", and bytes that are not printable ASCII (a binary file, /dev/zero) shown as \xNN, never raw.
std::string quoted_excerpt(std::string_view text, std::size_t max_chars = 40);

}  // namespace tilesim
