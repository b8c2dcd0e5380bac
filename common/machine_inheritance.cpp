#include "common/machine_inheritance.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "common/error.hpp"
#include "common/machine_files.hpp"
#include "common/strict_json.hpp"

namespace fs = std::filesystem;

namespace tilesim {

namespace {

std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

// A section is an object of figures or sections; a figure is an object holding "value".
bool is_section(const nlohmann::json& v) { return v.is_object() && !v.contains("value"); }

// Every figure and other value under `value` (at `path`) is stated by `file`.
void mark_stated(const nlohmann::json& value, const std::string& path, const std::string& file,
                 std::map<std::string, std::string>& stated_in) {
  if (!path.empty() && !is_section(value)) {
    stated_in[path] = file;
    return;
  }
  if (!value.is_object()) return;
  for (const auto& [key, v] : value.items()) mark_stated(v, join(path, key), file, stated_in);
}

// Keys of its own a derived file may state though its base has none.
bool own_top_level_key(const std::string& key) { return key == "name" || key == "description" || key == "notes"; }

struct Merge {
  const std::string& file;       // the derived file
  const std::string& base_file;  // its immediate base
  std::map<std::string, std::string>& stated_in;

  void into(nlohmann::json& base, const nlohmann::json& derived, const std::string& path) {
    for (const auto& [key, value] : derived.items()) {
      if (path.empty() && key == "base") continue;
      const std::string at = join(path, key);
      if (!base.contains(key)) {
        if (!(path.empty() && own_top_level_key(key)))
          throw InputError(file, at, "a key its base " + base_file + " has (a derived file restates only what differs)",
                           "unknown key \"" + key + "\"");
        base[key] = value;
        stated_in[at] = file;
        continue;
      }
      nlohmann::json& inherited = base[key];
      if (is_section(inherited)) {
        if (!value.is_object())
          throw InputError(file, at, "an object of figures, like the section of its base " + base_file, describe_json(value));
        into(inherited, value, at);
      } else {
        inherited = value;  // a figure (or a name, a note) replaces the base's as a whole
        mark_stated(value, at, file, stated_in);
      }
    }
  }
};

std::string canonical_text(const std::string& file) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::path(file), ec);
  return ec ? file : p.string();
}

MachineDocument resolve(const nlohmann::json& document, const std::string& file, const std::string& shipped_dir,
                        const std::string& kind, const CheckBase& check_base, std::vector<std::string> chain) {
  MachineDocument out;
  out.files.push_back(file);
  if (!document.is_object() || !document.contains("base")) {
    out.document = document;
    mark_stated(document, "", file, out.stated_in);
    return out;
  }
  ObjectReader root(document, file, "");
  const std::string base = root.string("base");
  for (const char* key : {"name", "description"})
    if (!root.has(key))
      throw InputError(file, key, "this key (a derived file names and describes its own machine)", "nothing");

  const fs::path base_path =
      names_a_file(base) ? fs::path(file).parent_path() / base : fs::path(shipped_dir) / (base + ".json");
  // The error_code form: the throwing one made a name the file system refuses (too long) an internal
  // error (found by fuzzing: a "base" of 300 characters).
  std::error_code ec;
  if (!fs::is_regular_file(base_path, ec)) {
    const std::string why = ec && ec != std::errc::no_such_file_or_directory ? ": " + ec.message() : " does not exist";
    std::string shipped;
    for (const auto& n : json_file_stems(shipped_dir)) shipped += (shipped.empty() ? "" : ", ") + n;
    throw InputError(file, "base", "a shipped " + kind + " machine (" + shipped + ") or a path relative to this file",
                     "\"" + base + "\" (" + base_path.string() + why + ")");
  }
  chain.push_back(canonical_text(file));
  const std::string base_canonical = canonical_text(base_path.string());
  if (std::find(chain.begin(), chain.end(), base_canonical) != chain.end()) {
    std::string cycle;
    for (const auto& f : chain) cycle += f + " -> ";
    throw InputError(file, "base", "a chain of bases that ends (no file may be its own base)",
                     "a cycle: " + cycle + base_canonical);
  }
  MachineDocument inherited =
      resolve(load_json_file(base_path.string()), base_path.string(), shipped_dir, kind, check_base, chain);
  if (check_base) check_base(inherited.document, base_path.string());

  out.document = std::move(inherited.document);
  out.stated_in = std::move(inherited.stated_in);
  for (auto& f : inherited.files) out.files.push_back(std::move(f));
  Merge{file, base_path.string(), out.stated_in}.into(out.document, document, "");
  return out;
}

}  // namespace

MachineDocument resolve_machine_document(const nlohmann::json& document, const std::string& file,
                                         const std::string& shipped_dir, const std::string& kind,
                                         const CheckBase& check_base) {
  return resolve(document, file, shipped_dir, kind, check_base, {});
}

MachineDocument read_machine_document(const std::string& file, const std::string& shipped_dir, const std::string& kind,
                                      const CheckBase& check_base) {
  return resolve_machine_document(load_json_file(file), file, shipped_dir, kind, check_base);
}

}  // namespace tilesim
