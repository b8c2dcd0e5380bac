#include "models/ipu/machine/machine_file.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "common/error.hpp"
#include "common/machine_files.hpp"
#include "common/machine_inheritance.hpp"
#include "common/machine_overrides.hpp"
#include "common/strict_json.hpp"

namespace tilesim::ipu {

namespace {

constexpr std::int64_t kMaxCycles = 1'000'000'000;

}  // namespace

std::string ipu_machine_dir() {
  if (const char* env = std::getenv("TILESIM_MACHINE_DIR"); env && *env) return env;
  return TILESIM_IPU_MACHINE_DIR;
}

std::vector<std::string> shipped_ipu_machines() { return json_file_stems(ipu_machine_dir()); }

namespace {

IpuMachine parse_resolved(const MachineDocument& resolved);

// Checks a base file before a derived file inherits from it, so its faults name the base.
void check_base(const nlohmann::json& document, const std::string& file) {
  parse_resolved(MachineDocument{document, {file}, {}});
}

MachineDocument read_ipu_document(const std::string& file) {
  return read_machine_document(file, ipu_machine_dir(), "IPU", check_base);
}

// `chip_overrides`: a what-if system's overrides of figures its chip file states (load_ipu_machine).
IpuMachine parse_ipu_system(const MachineDocument& resolved, const MachineOverrides* chip_overrides = nullptr) {
  const nlohmann::json& document = resolved.document;
  const std::string& file = resolved.files.front();
  ObjectReader root(document, file, "");
  const std::string chip_name = root.string("chip_file");
  // Relative to the file that names it, which may be a base of this one.
  MachineProvenance provenance(resolved.files, resolved.stated_in);
  const std::string& naming_file = provenance.file_stating("chip_file");
  const std::filesystem::path chip_path = std::filesystem::path(naming_file).parent_path() / chip_name;
  const std::string unreadable = unreadable_file_reason(chip_path.string());
  if (!unreadable.empty()) {
    throw InputError(naming_file, root.path_of("chip_file"), "an IPU chip machine file (path relative to this file)",
                     "\"" + chip_name + "\" (" + chip_path.string() + ": " + unreadable + ")");
  }
  MachineDocument chip_document = read_ipu_document(chip_path.string());
  if (chip_overrides) chip_document = apply_machine_overrides(std::move(chip_document), *chip_overrides, "IPU");
  if (chip_document.document.is_object() && chip_document.document.contains("chip_file")) {
    throw InputError(naming_file, root.path_of("chip_file"), "a single-IPU chip machine file",
                     "\"" + chip_name + "\", itself a system file");
  }
  IpuMachine m = parse_resolved(chip_document);
  m.file = file;
  m.chip.name = root.string("name");
  m.description = root.string("description");
  root.string_or("notes", "");
  m.system.chip_file = chip_path.string();
  // The chip file's roofline figures are one IPU's; no source gives a whole system's.
  m.roofline = RooflineFigures{};

  FigureReader sys(root.object("system"), provenance);
  auto& s = m.system;
  s.num_ipus = static_cast<std::int32_t>(sys.integer("num_ipus", 2, 256));
  if (s.num_ipus % 2 != 0) {
    throw InputError(file, "system.num_ipus.value", "an even number of IPUs (the ladder pairs them)",
                     std::to_string(s.num_ipus));
  }
  const double link_bits_per_s = sys.number("link_bits_per_s", 1e6, 1e15);
  const double efficiency = sys.number("link_efficiency", 0.01, 1.0);
  s.link_bytes_per_cycle = link_bits_per_s * efficiency / 8.0 / m.chip.clock_hz;
  s.links_to_pair = sys.integer("links_to_pair", 1, 64);
  s.links_up_down = sys.integer("links_up_down", s.num_ipus > 2 ? 1 : 0, 64);
  s.links_cross_rung = sys.integer("links_cross_rung", 0, 64);
  m.chip.link_latency_cycles = sys.integer("link_latency_cycles", 0, kMaxCycles);
  m.chip.cross_chip_sync_cycles = sys.integer("global_sync_cycles", 0, kMaxCycles);
  // Several machines (a Pod): all four gateway figures or none.
  if (sys.has("ipus_per_machine")) {
    s.ipus_per_machine = static_cast<std::int32_t>(sys.integer("ipus_per_machine", 4, s.num_ipus));
    if (s.ipus_per_machine % 4 != 0 || s.num_ipus % s.ipus_per_machine != 0) {
      throw InputError(file, "system.ipus_per_machine.value",
                       "a multiple of 4 (two ladder rungs, the gateway IPUs 0 and 2 of each machine) dividing num_ipus (" +
                           std::to_string(s.num_ipus) + ")",
                       std::to_string(s.ipus_per_machine));
    }
    const double gateway_bits_per_s = sys.number("gateway_link_bits_per_s", 1e6, 1e15);
    const double gateway_efficiency = sys.number("gateway_link_efficiency", 0.01, 1.0);
    s.gateway_link_bytes_per_cycle = gateway_bits_per_s * gateway_efficiency / 8.0 / m.chip.clock_hz;
    s.gateway_latency_cycles = sys.integer("gateway_latency_cycles", 0, kMaxCycles);
    if (s.ipus_per_machine == s.num_ipus) s.ipus_per_machine = 0;  // one machine: no gateway on any route
  }
  sys.finish();
  root.finish();

  if (static_cast<std::int64_t>(m.chip.num_tiles) * s.num_ipus > (1 << 20)) {
    throw InputError(file, "system.num_ipus.value", "at most 2^20 tiles in all",
                     std::to_string(s.num_ipus) + " IPUs of " + std::to_string(m.chip.num_tiles) + " tiles");
  }
  m.chip.tiles_per_chip = m.chip.num_tiles;
  m.chip.num_tiles *= s.num_ipus;
  set_ladder_links(m.chip, s);
  provenance.append(m.provenance);  // the system file's figures, then the chip file's
  m.provenance = std::move(provenance);
  return m;
}

}  // namespace

void set_ladder_links(sim::MachineConfig& config, const IpuSystem& system) {
  const std::int32_t n = system.num_ipus;
  config.links.clear();
  config.routes.assign(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), {});
  if (n < 2) return;
  const std::int32_t per_machine = system.ipus_per_machine > 0 ? system.ipus_per_machine : n;
  const std::int32_t machines = n / per_machine;
  // Link group index of each ordered chip pair that a group joins directly (-1: none).
  std::vector<std::int32_t> group(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), -1);
  auto connect = [&](std::int32_t a, std::int32_t b, double bytes_per_cycle, sim::Cycles latency_cycles) {
    if (!(bytes_per_cycle > 0)) return;
    for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      group[static_cast<std::size_t>(from * n + to)] = static_cast<std::int32_t>(config.links.size());
      config.links.push_back({from, to, bytes_per_cycle, latency_cycles});
    }
  };
  auto ipu_links = [&](std::int64_t count) { return static_cast<double>(count) * system.link_bytes_per_cycle; };
  // Within machine m, IPU base + c sits on rung c / 2, side c % 2.
  for (std::int32_t m = 0; m < machines; ++m) {
    const std::int32_t base = m * per_machine;
    for (std::int32_t rung = 0; rung < per_machine / 2; ++rung) {
      const std::int32_t c = base + 2 * rung;
      connect(c, c + 1, ipu_links(system.links_to_pair), -1);
      if (rung + 1 < per_machine / 2) {
        connect(c, c + 2, ipu_links(system.links_up_down), -1);
        connect(c + 1, c + 3, ipu_links(system.links_up_down), -1);
        connect(c, c + 3, ipu_links(system.links_cross_rung), -1);
        connect(c + 1, c + 2, ipu_links(system.links_cross_rung), -1);
      }
    }
  }
  // The ring of machines: exit IPU base + 2 to the next machine's entry IPU (its base).
  const auto exit_ipu = [&](std::int32_t m) { return m * per_machine + 2; };
  const auto entry_ipu = [&](std::int32_t m) { return m * per_machine; };
  if (machines > 1) {
    for (std::int32_t m = 0; m < machines; ++m) {
      connect(exit_ipu(m), entry_ipu((m + 1) % machines), system.gateway_link_bytes_per_cycle,
              system.gateway_latency_cycles);
    }
  }
  auto link = [&](std::int32_t from, std::int32_t to) { return group[static_cast<std::size_t>(from * n + to)]; };
  // Inside one machine: straight over a direct group (the pair, or the next rung), else across the rung
  // first, then up or down on the destination's side.
  auto ladder = [&](std::int32_t from, std::int32_t to, std::vector<std::int32_t>& route) {
    if (from == to) return;
    if (link(from, to) >= 0) {
      route.push_back(link(from, to));
      return;
    }
    std::int32_t at = from;
    if (at % 2 != to % 2) {
      route.push_back(link(at, at ^ 1));
      at ^= 1;
    }
    while (at != to) {
      const std::int32_t next = at < to ? at + 2 : at - 2;
      route.push_back(link(at, next));
      at = next;
    }
  };
  for (std::int32_t from = 0; from < n; ++from) {
    for (std::int32_t to = 0; to < n; ++to) {
      auto& route = config.routes[static_cast<std::size_t>(from * n + to)];
      const std::int32_t mf = from / per_machine;
      const std::int32_t mt = to / per_machine;
      if (mf == mt) {
        ladder(from, to, route);
        continue;
      }
      const std::int32_t ahead = (mt - mf + machines) % machines;
      const bool forward = ahead <= machines - ahead;
      std::int32_t at = from;
      for (std::int32_t m = mf; m != mt; m = (m + (forward ? 1 : machines - 1)) % machines) {
        const std::int32_t next = (m + (forward ? 1 : machines - 1)) % machines;
        const std::int32_t leave = forward ? exit_ipu(m) : entry_ipu(m);
        const std::int32_t arrive = forward ? entry_ipu(next) : exit_ipu(next);
        ladder(at, leave, route);
        route.push_back(link(leave, arrive));
        at = arrive;
      }
      ladder(at, to, route);
    }
  }
}

namespace {

// The codelet figures, by key: the member each sets and its bounds. The "codelets" section gives all of
// them (its AMP rate is the float32 one); "codelets_float16" may give any (its AMP rate under its own key)
// and the float16-only figures.
struct CodeletField {
  const char* key;
  std::int64_t CodeletCosts::*member;
  std::int64_t min, max;
};

const std::vector<CodeletField>& codelet_fields() {
  static const std::vector<CodeletField> fields = {
      {"supervisor_cycles", &CodeletCosts::supervisor_cycles, 0, kMaxCycles},
      {"multislice_prologue_worker_cycles", &CodeletCosts::multislice_prologue_worker_cycles, 0, kMaxCycles},
      {"multislice_in_range_worker_cycles", &CodeletCosts::multislice_in_range_worker_cycles, 0, kMaxCycles},
      {"multislice_out_of_range_worker_cycles", &CodeletCosts::multislice_out_of_range_worker_cycles, 0, kMaxCycles},
      {"multislice_elements_per_vector", &CodeletCosts::multislice_elements_per_vector, 1, 1024},
      {"multislice_cycles_per_vector", &CodeletCosts::multislice_cycles_per_vector, 0, kMaxCycles},
      {"multiupdateadd_prologue_worker_cycles", &CodeletCosts::multiupdateadd_prologue_worker_cycles, 0, kMaxCycles},
      {"multiupdateadd_in_range_worker_cycles", &CodeletCosts::multiupdateadd_in_range_worker_cycles, 0, kMaxCycles},
      {"multiupdateadd_per_extra_element_worker_cycles", &CodeletCosts::multiupdateadd_per_extra_element_worker_cycles, 0, kMaxCycles},
      {"multiupdateadd_out_of_range_worker_cycles", &CodeletCosts::multiupdateadd_out_of_range_worker_cycles, 0, kMaxCycles},
      {"fill_prologue_worker_cycles", &CodeletCosts::fill_prologue_worker_cycles, 0, kMaxCycles},
      {"fill_bytes_per_worker_cycle", &CodeletCosts::fill_bytes_per_worker_cycle, 1, 1024},
      {"index_transform_prologue_worker_cycles", &CodeletCosts::index_transform_prologue_worker_cycles, 0, kMaxCycles},
      {"index_transform_worker_cycles_per_element", &CodeletCosts::index_transform_worker_cycles_per_element, 0, kMaxCycles},
      {"reduce_prologue_worker_cycles", &CodeletCosts::reduce_prologue_worker_cycles, 0, kMaxCycles},
      {"reduce_per_vector_worker_cycles", &CodeletCosts::reduce_per_vector_worker_cycles, 0, kMaxCycles},
      {"reduce_per_partial_worker_cycles", &CodeletCosts::reduce_per_partial_worker_cycles, 0, kMaxCycles},
      {"reduce_elements_per_vector", &CodeletCosts::reduce_elements_per_vector, 1, 1024},
      {"elementwise_elements_per_vector", &CodeletCosts::elementwise_elements_per_vector, 1, 1024},
      {"unary_prologue_worker_cycles", &CodeletCosts::unary_prologue_worker_cycles, 0, kMaxCycles},
      {"unary_transcendental_prologue_worker_cycles", &CodeletCosts::unary_transcendental_prologue_worker_cycles, 0, kMaxCycles},
      {"unary_relu_worker_cycles_per_vector", &CodeletCosts::unary_relu_worker_cycles_per_vector, 0, kMaxCycles},
      {"unary_leaky_relu_worker_cycles_per_vector", &CodeletCosts::unary_leaky_relu_worker_cycles_per_vector, 0, kMaxCycles},
      {"unary_shifted_softplus_worker_cycles_per_vector", &CodeletCosts::unary_shifted_softplus_worker_cycles_per_vector, 0, kMaxCycles},
      {"unary_exp_worker_cycles_per_vector", &CodeletCosts::unary_exp_worker_cycles_per_vector, 0, kMaxCycles},
      {"unary_scale_worker_cycles_per_vector", &CodeletCosts::unary_scale_worker_cycles_per_vector, 0, kMaxCycles},
      {"unary_rsqrt_or_zero_worker_cycles_per_vector", &CodeletCosts::unary_rsqrt_or_zero_worker_cycles_per_vector, 0, kMaxCycles},
      {"unary_reciprocal_or_zero_worker_cycles_per_vector", &CodeletCosts::unary_reciprocal_or_zero_worker_cycles_per_vector, 0, kMaxCycles},
      {"unary_cosine_cutoff_worker_cycles_per_vector", &CodeletCosts::unary_cosine_cutoff_worker_cycles_per_vector, 0, kMaxCycles},
      {"unary_softplus_worker_cycles_per_vector", &CodeletCosts::unary_softplus_worker_cycles_per_vector, 0, kMaxCycles},
      {"unary_sigmoid_worker_cycles_per_vector", &CodeletCosts::unary_sigmoid_worker_cycles_per_vector, 0, kMaxCycles},
      {"binary_prologue_worker_cycles", &CodeletCosts::binary_prologue_worker_cycles, 0, kMaxCycles},
      {"binary_add_subtract_multiply_worker_cycles_per_vector", &CodeletCosts::binary_add_subtract_multiply_worker_cycles_per_vector, 0, kMaxCycles},
      {"binary_divide_worker_cycles_per_vector", &CodeletCosts::binary_divide_worker_cycles_per_vector, 0, kMaxCycles},
      {"amp_vertex_fixed_cycles", &CodeletCosts::amp_vertex_fixed_cycles, 0, kMaxCycles},
      {"amp_float32_flops_per_tile_cycle", &CodeletCosts::amp_flops_per_tile_cycle, 1, 1 << 20},
      {"scaled_add_prologue_worker_cycles", &CodeletCosts::scaled_add_prologue_worker_cycles, 0, kMaxCycles},
      {"scaled_add_worker_cycles_per_vector", &CodeletCosts::scaled_add_worker_cycles_per_vector, 0, kMaxCycles},
      {"unary_sqrt_worker_cycles_per_vector", &CodeletCosts::unary_sqrt_worker_cycles_per_vector, 0, kMaxCycles},
      {"unary_log_worker_cycles_per_vector", &CodeletCosts::unary_log_worker_cycles_per_vector, 0, kMaxCycles},
      {"binary_maximum_worker_cycles_per_vector", &CodeletCosts::binary_maximum_worker_cycles_per_vector, 0, kMaxCycles},
      {"transpose_prologue_worker_cycles", &CodeletCosts::transpose_prologue_worker_cycles, 0, kMaxCycles},
      {"transpose_worker_cycles_per_element", &CodeletCosts::transpose_worker_cycles_per_element, 0, kMaxCycles},
      {"cast_prologue_worker_cycles", &CodeletCosts::cast_prologue_worker_cycles, 0, kMaxCycles},
      {"cast_narrowing_elements_per_vector", &CodeletCosts::cast_narrowing_elements_per_vector, 1, 1024},
      {"cast_narrowing_worker_cycles_per_vector", &CodeletCosts::cast_narrowing_worker_cycles_per_vector, 0, kMaxCycles},
      {"cast_widening_elements_per_vector", &CodeletCosts::cast_widening_elements_per_vector, 1, 1024},
      {"cast_widening_worker_cycles_per_vector", &CodeletCosts::cast_widening_worker_cycles_per_vector, 0, kMaxCycles},
  };
  return fields;
}

const std::vector<CodeletField>& float16_only_codelet_fields() {
  static const std::vector<CodeletField> fields = {
      {"amp_float16_flops_per_tile_cycle", &CodeletCosts::amp_flops_per_tile_cycle, 1, 1 << 20},
      {"multiupdateadd_per_extra_atom_worker_cycles", &CodeletCosts::multiupdateadd_per_extra_element_worker_cycles, 0, kMaxCycles},
      {"multiupdateadd_elements_per_atom", &CodeletCosts::multiupdateadd_elements_per_atom, 1, 64},
      {"multiupdateadd_subword_write_worker_cycles_per_element", &CodeletCosts::multiupdateadd_subword_write_worker_cycles_per_element, 0, kMaxCycles},
  };
  return fields;
}

void read_roofline(FigureReader roofline, RooflineFigures& r) {
  if (roofline.has("tile_sram_bytes_per_s")) r.tile_sram_bytes_per_s = roofline.positive_number("tile_sram_bytes_per_s");
  if (roofline.has("peak_flops_per_s")) {
    FigureReader peak = roofline.section("peak_flops_per_s");
    // fp32 is not here: it is derived from codelets.amp_float32_flops_per_tile_cycle, which the simulator uses.
    if (peak.has("float16")) r.peak_flops_per_s["float16"] = peak.positive_number("float16");
    peak.finish();
  }
  roofline.finish();
}

// Link rates are stated in bits per second, as datasheets give them; the model uses bytes.
constexpr double kBitsPerByte = 8.0;
// No host call, link or epoch start is slower than this: a bound that catches a value in the wrong unit.
constexpr double kMaxHostSeconds = 3600.0;

HostFigures read_host(FigureReader host) {
  HostFigures h;
  h.host_call_s = host.number("host_call_s", 0.0, kMaxHostSeconds);
  h.host_link_bytes_per_s = host.number("host_link_bits_per_s", 1e6, 1e15) / kBitsPerByte;
  h.ipus_per_host_link = static_cast<std::int32_t>(host.integer("ipus_per_host_link", 1, 1 << 16));
  h.stream_copy_bytes_per_s = host.number("stream_copy_bits_per_s", 1e6, 1e15) / kBitsPerByte;
  h.epoch_fixed_s = host.number("epoch_fixed_s", 0.0, kMaxHostSeconds);
  host.finish();
  return h;
}

IpuMachine parse_resolved(const MachineDocument& resolved) {
  const nlohmann::json& document = resolved.document;
  if (document.is_object() && document.contains("chip_file")) return parse_ipu_system(resolved);
  const std::string& file = resolved.files.front();
  ObjectReader root(document, file, "");
  IpuMachine m;
  m.file = file;
  m.provenance = MachineProvenance(resolved.files, resolved.stated_in);
  m.chip.name = root.string("name");
  m.description = root.string("description");
  root.string_or("notes", "");

  FigureReader chip(root.object("chip"), m.provenance);
  m.chip.num_tiles = static_cast<std::int32_t>(chip.integer("num_tiles", 1, 1 << 20));
  m.chip.clock_hz = chip.number("tile_clock_hz", 1e6, 1e11);
  m.chip.sram_bytes_per_tile = chip.integer("sram_bytes_per_tile", 1024, std::int64_t{1} << 34);
  m.chip.worker_contexts = static_cast<std::int32_t>(chip.integer("worker_contexts", 1, 64));
  m.chip.tiles_per_supertile = static_cast<std::int32_t>(chip.integer("tiles_per_supertile", 1, 64));
  m.chip.exchange_bytes_per_cycle = chip.number("exchange_bytes_per_cycle", 0.001, 1e6);
  m.chip.sync_cycles = chip.integer("sync_cycles", 0, kMaxCycles);
  m.chip.exchange_fixed_cycles = chip.integer("exchange_fixed_cycles", 0, kMaxCycles);
  m.chip.exchange_cycles_per_region = chip.integer("exchange_cycles_per_region", 0, kMaxCycles);
  m.chip.compute_fixed_cycles = chip.integer("compute_fixed_cycles", 0, kMaxCycles);
  chip.finish();
  // Tiles share exchange buses in groups (supertiles): a count that does not fill its last group
  // describes no chip, whichever file (or what-if machine) states it.
  if (m.chip.num_tiles % m.chip.tiles_per_supertile != 0)
    throw InputError(m.provenance.file_stating("chip.num_tiles"), "chip.num_tiles.value",
                     "a multiple of chip.tiles_per_supertile (" + std::to_string(m.chip.tiles_per_supertile) +
                         " tiles share an exchange bus)",
                     std::to_string(m.chip.num_tiles));

  FigureReader c(root.object("codelets"), m.provenance);
  for (const CodeletField& f : codelet_fields()) m.float32_codelets.*f.member = c.integer(f.key, f.min, f.max);
  c.finish();
  m.codelets = m.float32_codelets;
  if (root.has("codelets_float16")) {
    // Only the figures that differ for 16-bit data; every other one is the float32 set's.
    FigureReader h(root.object("codelets_float16"), m.provenance);
    m.has_float16_codelets = true;
    m.float16_codelets = m.float32_codelets;
    for (const auto* fields : {&codelet_fields(), &float16_only_codelet_fields()}) {
      for (const CodeletField& f : *fields) {
        if (std::string(f.key) == "amp_float32_flops_per_tile_cycle" || std::string(f.key) == "multiupdateadd_per_extra_element_worker_cycles") continue;
        if (h.has(f.key)) m.float16_codelets.*f.member = h.integer(f.key, f.min, f.max);
      }
    }
    h.finish();
  }

  FigureReader p(root.object("planner"), m.provenance);
  m.planner.min_indices_per_tile = p.integer("min_indices_per_tile", 1, std::int64_t{1} << 30);
  m.planner.memory_fraction = p.number("memory_fraction", 0.01, 1.0);
  m.planner.column_grain_bytes = p.integer("column_grain_bytes", 1, 4096);
  m.planner.linear_min_bytes_per_tile = p.integer("linear_min_bytes_per_tile", 1, std::int64_t{1} << 30);
  m.planner.objective_sync_cycles = p.integer("objective_sync_cycles", 0, kMaxCycles);
  m.planner.outputs_to_linear_layout = p.integer("outputs_to_linear_layout", 0, 1) == 1;
  m.planner.gather_output_to_linear_layout = p.integer("gather_output_to_linear_layout", 0, 1) == 1;
  m.planner.scatter_base_from_linear_layout = p.integer("scatter_base_from_linear_layout", 0, 1) == 1;
  m.planner.gather_table_from_linear_layout = p.integer("gather_table_from_linear_layout", 0, 1) == 1;
  m.planner.scatter_messages_from_linear_layout = p.integer("scatter_messages_from_linear_layout", 0, 1) == 1;
  m.planner.objective_includes_base_rearrangement = p.integer("objective_includes_base_rearrangement", 0, 1) == 1;
  m.planner.repeat_loop_control_cycles = p.integer("repeat_loop_control_cycles", 0, kMaxCycles);
  p.finish();

  if (root.has("roofline")) read_roofline(FigureReader(root.object("roofline"), m.provenance), m.roofline);
  if (root.has("host")) m.host = read_host(FigureReader(root.object("host"), m.provenance));
  root.finish();
  return m;
}

}  // namespace

IpuMachine parse_ipu_machine(const nlohmann::json& document, const std::string& file) {
  return parse_resolved(resolve_machine_document(document, file, ipu_machine_dir(), "IPU", check_base));
}

bool models_value_dtype(const IpuMachine& machine, DType dtype) {
  return dtype == DType::float32 || (dtype == DType::float16 && machine.has_float16_codelets);
}

std::string unmodelled_value_dtype_reason(const IpuMachine& machine, DType dtype) {
  if (models_value_dtype(machine, dtype)) return "";
  if (dtype == DType::float16) {
    return "machine file " + machine.file + " has no \"codelets_float16\" section, so the simulated tiles hold float32 values only";
  }
  if (dtype == DType::bfloat16) {
    return "the IPU's vector and AMP units take float16 and float32, not bfloat16: the simulated tiles hold no bfloat16 values";
  }
  return "the simulated tiles hold float32 and float16 values, not " + to_string(dtype);
}

IpuMachine with_value_dtype(IpuMachine machine, DType dtype) {
  // Already set up (possibly with codelets a fit or a test adjusted): kept as it is.
  if (machine.value_dtype == dtype) return machine;
  if (!models_value_dtype(machine, dtype)) {
    throw InputError("ipu machine " + machine.chip.name + ": values of type " + to_string(dtype) + " are not modelled: " +
                     unmodelled_value_dtype_reason(machine, dtype));
  }
  machine.value_dtype = dtype;
  machine.codelets = dtype == DType::float16 ? machine.float16_codelets : machine.float32_codelets;
  return machine;
}

std::string more_ipus_next_step(const IpuMachine& machine) {
  std::string systems;
  for (const auto& name : shipped_ipu_machines()) {
    const IpuMachine m = load_ipu_machine(name);
    if (m.system.num_ipus <= machine.system.num_ipus) continue;
    systems += (systems.empty() ? "" : ", ") + std::string("ipu:") + name + " (" + std::to_string(m.system.num_ipus) + " IPUs)";
  }
  if (systems.empty()) {
    return "split the work over more IPUs (an IPU system machine file with a larger system.num_ipus, see "
           "docs/machine-format.md)";
  }
  return "split the work over more IPUs: run on an IPU system, " + systems;
}

IpuMachine load_ipu_machine(const std::string& name_or_path) {
  // A what-if machine (common/machine_overrides.hpp): its base, then its figures.
  const auto what_if = split_machine_overrides(name_or_path, "IPU");
  const std::string base = what_if ? what_if->base : name_or_path;
  std::string path = base;
  if (!names_a_file(base)) {
    path = ipu_machine_dir() + "/" + base + ".json";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      throw InputError("unknown IPU machine \"" + base + "\": expected " +
                       shipped_names_text(shipped_ipu_machines(), ipu_machine_dir(), "TILESIM_MACHINE_DIR") +
                       " or a path to a machine file (*.json)");
    }
  }
  MachineDocument document = read_ipu_document(path);
  if (!what_if) return parse_resolved(document);
  if (document.document.is_object() && document.document.contains("chip_file")) {
    // A system's own figures are set in its file; the others are its chip's.
    const auto [own, chip] = split_by_presence(*what_if, document.document);
    return parse_ipu_system(apply_machine_overrides(std::move(document), own, "IPU"), &chip);
  }
  return parse_resolved(apply_machine_overrides(std::move(document), *what_if, "IPU"));
}

}  // namespace tilesim::ipu
