#pragma once
// Replacing an output file whole: reports, results files and machine files a command writes are
// never left half-written, by a full disk or by two processes writing the same path.
#include <string>

namespace tilesim {

// Writes `text` to `path` through a temporary file of this process's own and a rename, so an existing
// file is never left half-written. Throws InputError naming the path if it cannot be created there,
// and Error (exit 1) if a write fails (a full disk), the file then unchanged.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace tilesim
