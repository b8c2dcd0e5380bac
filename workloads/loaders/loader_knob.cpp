#include "workloads/loaders/loader_knob.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tilesim::workloads::loaders {

BatchKnob batch_knob(const LoaderSpec& spec) {
  switch (spec.kind) {
    case LoaderSpec::Kind::neighbor: return {"batch_size", spec.batch_size};
    case LoaderSpec::Kind::cluster: return {"clusters_per_batch", spec.clusters_per_batch};
    case LoaderSpec::Kind::graphs:
      if (spec.packing == LoaderSpec::Packing::pad) return {"batch_size", spec.batch_size};
      return {"fixed_size.num_nodes", spec.fixed_size->num_nodes};
  }
  throw std::logic_error("batch_knob: unknown loader kind");
}

LoaderSpec with_batch_knob(const LoaderSpec& spec, std::int64_t value) {
  LoaderSpec s = spec;
  switch (s.kind) {
    case LoaderSpec::Kind::neighbor: s.batch_size = value; break;
    case LoaderSpec::Kind::cluster: s.clusters_per_batch = std::min<std::int64_t>(value, s.num_parts); break;
    case LoaderSpec::Kind::graphs:
      if (s.packing == LoaderSpec::Packing::pad) {
        s.batch_size = value;
        s.fixed_size.reset();
      } else {
        const double scale = static_cast<double>(value) / static_cast<double>(spec.fixed_size->num_nodes);
        s.fixed_size->num_nodes = value;
        s.fixed_size->num_edges = std::max<std::int64_t>(0, std::llround(scale * static_cast<double>(spec.fixed_size->num_edges)));
        s.fixed_size->num_graphs = std::max<std::int64_t>(2, std::llround(scale * static_cast<double>(spec.fixed_size->num_graphs)));
      }
      break;
  }
  return s;
}

}  // namespace tilesim::workloads::loaders
