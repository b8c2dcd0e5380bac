#pragma once
// Which sweep an output folder holds: sweep.json records the resolved sweep (the file with the
// command line applied) and its SHA-256, so --resume can refuse a folder that holds another sweep's
// rows instead of mixing them and replacing its sweep.json.
#include <string>

#include <nlohmann/json.hpp>

namespace tilesim::runs::sweep {

// SHA-256 (hex) of the resolved sweep's JSON text, the identity --resume checks.
std::string spec_sha256(const nlohmann::json& resolved_spec);

// The sweep file's path made absolute and canonical (symbolic links, "." and ".." resolved as far as
// the path exists), so ./s.json, /abs/s.json and ../dir/s.json from elsewhere name one file; the path
// as given when it cannot be resolved.
std::string canonical_sweep_file(const std::string& path);

// For --resume into `out_dir` where results.csv exists: throws InputError (exit 2), changing nothing,
// unless the folder's sweep.json records this same resolved sweep. A sweep.json written before the
// hash was recorded is compared key by key. The sweep file counts as the same when its canonical path
// is (sweep.json's run.source_file_canonical, or its source_file resolved from here), however named.
void check_same_sweep(const std::string& out_dir, const nlohmann::json& resolved_spec);

}  // namespace tilesim::runs::sweep
