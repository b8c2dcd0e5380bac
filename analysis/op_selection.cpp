#include "analysis/op_selection.hpp"

#include <set>
#include <sstream>

#include "common/error.hpp"

namespace tilesim::analysis {

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) items.push_back(item);
  return items;
}

std::vector<std::string> ops_to_draw(const std::vector<ResultRow>& rows, const std::string& ops_arg) {
  if (!ops_arg.empty()) {
    const auto ops = split_list(ops_arg);
    const std::set<std::string> known = {"gather", "scatter_add", "scatter_max", "scatter_min", "schnet_block"};
    for (const auto& op : ops)
      if (!known.count(op))
        throw InputError("", "--ops", "a comma-separated list of gather, scatter_add, scatter_max, scatter_min, schnet_block",
                         "\"" + op + "\"");
    if (ops.empty()) throw InputError("", "--ops", "at least one op", "\"" + ops_arg + "\"");
    return ops;
  }
  std::vector<std::string> ops;
  // The sweepable ops a results table holds, in a fixed order.
  for (const char* op : {"gather", "scatter_add", "schnet_block"})
    for (const auto& r : rows)
      if (r.op == op) {
        ops.push_back(op);
        break;
      }
  return ops;
}

}  // namespace tilesim::analysis
