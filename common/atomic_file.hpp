#pragma once
// Replacing an output file whole: reports, results files and machine files a command writes are
// never left half-written, by a full disk or by two processes writing the same path.
#include <string>

namespace tilesim {

// Writes `text` to `path` through a temporary file of this process's own and a rename, so an existing
// file is never left half-written. Throws InputError naming the path if it cannot be created there,
// and Error (exit 1) if a write fails (a full disk), the file then unchanged.
void write_file_atomically(const std::string& path, const std::string& text);

// Creates `dir` and its parents if they are not there. Throws InputError naming the directory, with
// `expected` as what was expected ("a directory the report can be written to (--out)") and the
// system's reason as what was found.
void create_output_directory(const std::string& dir, const std::string& expected);

}  // namespace tilesim
