#pragma once
// What-if machines: a machine named with figure overrides, "bow{chip.sram_bytes_per_tile=1277952}" or
// "a100-40gb{chip.hbm_bytes_per_s*=2;chip.sm_count=216}", is its base machine with those figures set
// (`=`) or scaled (`*=`). It is another machine: its name is the whole text, each overridden figure's
// source says it is the run's what-if and not a published figure, and its content hash differs from
// the base's, so results made on it are never mistaken for the base's (docs/machine-format.md,
// "What-if machines"). Every backend name that takes a machine takes one, and a sweep's machine axes
// (docs/sweep-format.md) are made of them.
#include <optional>
#include <string>
#include <vector>

#include "common/machine_inheritance.hpp"

namespace tilesim {

struct FigureOverride {
  std::string path;    // the figure's JSON path in the machine file: "chip.sram_bytes_per_tile"
  bool scale = false;  // `*=`: the base's value times `value`; `=`: `value` itself
  double value = 0;
  std::string text;    // as written, "chip.sram_bytes_per_tile=1277952"
};

struct MachineOverrides {
  std::string base;                     // the machine before the braces: a shipped name or a path
  std::vector<FigureOverride> figures;  // in the order written; each path once
  std::string text;                     // the whole name, as written
};

// Splits NAME{PATH=V;PATH*=F;...}; nullopt for a name without '{'. A malformed override (no closing
// brace, an empty path, a value that is not a finite number, a path twice) is an InputError naming the
// machine text; `kind` ("IPU", "GPU") words it.
std::optional<MachineOverrides> split_machine_overrides(const std::string& name, const std::string& kind);

// `resolved` (the base's merged document) with every override applied: each path must name a figure of
// the base (an object holding "value"), else an InputError naming the base file and the path. A figure
// whose base value is an integer keeps an integer when the new value is whole (the model's parser checks
// ranges and types as for any file). "name" becomes the what-if's text.
MachineDocument apply_machine_overrides(MachineDocument resolved, const MachineOverrides& overrides, const std::string& kind);

// The overrides whose path names something in `document` (a figure or a section), and the others.
std::pair<MachineOverrides, MachineOverrides> split_by_presence(const MachineOverrides& overrides, const nlohmann::json& document);

}  // namespace tilesim
