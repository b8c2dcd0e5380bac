#pragma once
// A sweep backend's machine axes (docs/sweep-format.md, "Machine axes"): `"machine": {PATH: AXIS, ...}`
// in a backend object sweeps figures of its machine file. Each combination (the axes crossed, paths in
// alphabetical order) is a what-if machine (common/machine_overrides.hpp) and runs as a backend of its
// own, "ipu:bow{chip.sram_bytes_per_tile=1277952}", so every row, machines.json entry and plot names
// the machine it was made on. Knows no machine files: whether a path names a figure, and whether the
// value is in range, is checked when the backends are made, before any point runs.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tilesim::analysis {

// Machines one backend entry's axes may make: each is a backend of its own, built before any point runs.
inline constexpr std::size_t max_machine_variants = 10000;

// The what-if override lists ("{chip.a=1;chip.b*=2}"), one per combination of the axes in `axes` (the
// backend object's "machine" value, at `json_path` in `file`). An axis is an array of numbers (the
// figure's values), {"scale": [numbers]} (multiples of the base machine's value) or a range
// {"from", "to", "times"} / {"from", "to", "step"} of numbers. Throws InputError naming the file and
// JSON path for anything else, an empty or repeated value, or more than `max_variants` combinations.
std::vector<std::string> machine_axis_variants(const nlohmann::json& axes, const std::string& file, const std::string& json_path,
                                               std::size_t max_variants);

// "ipu:bow" with "{chip.a=1}" -> "ipu:bow{chip.a=1}"; "gpu-model:a100-40gb:eager" -> "gpu-model:a100-40gb{...}:eager".
// Throws InputError (at `json_path`) when the name gives no machine ("ipu", "cpu").
std::string with_machine_overrides(const std::string& backend, const std::string& overrides, const std::string& file,
                                   const std::string& json_path);

}  // namespace tilesim::analysis
