#include "fitting/split.hpp"

namespace tilesim::fitting {

std::string split_rule_text() {
  return "a point is in the calibration half when log2(num_inputs) + log2(num_features) + log2(num_outputs) "
         "(each size rounded to its nearest base-2 exponent) is even, else it is held out; on the hydronet "
         "grid this is a checkerboard of 297 + 297 points spanning every value of every size";
}

}  // namespace tilesim::fitting
