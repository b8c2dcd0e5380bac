#include "workloads/loaders/epoch_work.hpp"

#include <iomanip>
#include <sstream>

namespace tilesim::workloads::loaders {

std::string throughput_unit(LoaderSpec::Kind kind) {
  switch (kind) {
    case LoaderSpec::Kind::neighbor: return "seed_nodes";
    case LoaderSpec::Kind::cluster: return "nodes";
    case LoaderSpec::Kind::graphs: return "graphs";
  }
  return "items";
}

double batch_items(const BatchShape& shape, LoaderSpec::Kind kind) {
  switch (kind) {
    case LoaderSpec::Kind::neighbor: return static_cast<double>(shape.seed_nodes);
    case LoaderSpec::Kind::cluster: return static_cast<double>(shape.nodes);
    case LoaderSpec::Kind::graphs: return static_cast<double>(shape.graphs);
  }
  return 0;
}

std::string EpochWork::counts() const {
  std::ostringstream s;
  s << "the epoch's " << items << " " << unit << " over its " << batches << " batch" << (batches == 1 ? "" : "es") << " ("
    << std::fixed << std::setprecision(1) << items_per_batch() << " per batch)";
  return s.str();
}

EpochWork epoch_work(const BatchSource& source, std::int64_t epoch) {
  EpochWork w;
  w.unit = throughput_unit(source.spec().kind);
  const auto& members = source.batch_plan(epoch);
  w.batches = static_cast<std::int64_t>(members.size());
  for (const auto& batch : members) w.items += source.plan_items(batch);
  return w;
}

}  // namespace tilesim::workloads::loaders
