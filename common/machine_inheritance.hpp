#pragma once
// Derived machine files: a file with "base": NAME (a shipped machine of the same kind) or "base":
// "path/to/file.json" (relative to the file) states only what differs from its base. The one merge
// rule for IPU and GPU machine files (docs/machine-format.md, "Derived machines"):
//  - objects merge key by key; an object holding "value" is a figure and replaces the base's whole;
//    any other value (a string, a number) replaces the base's;
//  - a derived file may state only keys its base has, besides its own "name", "description" and
//    "notes" (it must state "name" and "description": it is another machine);
//  - a base may itself have a base; a chain that comes back to a file is an error.
// Every error is an InputError naming the file and the JSON path.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tilesim {

struct MachineDocument {
  nlohmann::json document;                       // the merged document, without "base"
  std::vector<std::string> files;                // the file itself first, then its base chain
  std::map<std::string, std::string> stated_in;  // JSON path of each figure and other value -> its file
};

// Checks a base's merged document before it is inherited from (the model's strict parser), so a fault
// in a base is reported against the base's own file.
using CheckBase = std::function<void(const nlohmann::json& document, const std::string& file)>;

// Resolves `document`, read from `file`, against its base chain. Shipped base names are looked up as
// `shipped_dir`/NAME.json; `kind` ("IPU", "GPU") words the messages.
MachineDocument resolve_machine_document(const nlohmann::json& document, const std::string& file,
                                         const std::string& shipped_dir, const std::string& kind,
                                         const CheckBase& check_base);

// Reads `file` and resolves it.
MachineDocument read_machine_document(const std::string& file, const std::string& shipped_dir, const std::string& kind,
                                      const CheckBase& check_base);

}  // namespace tilesim
