#include "ir/parallelism.hpp"

#include <stdexcept>

namespace tilesim {

std::string to_string(AllreduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllreduceAlgorithm::ring: return "ring";
    case AllreduceAlgorithm::hierarchical: return "hierarchical";
  }
  throw std::logic_error("to_string: unknown all-reduce algorithm");
}

std::string to_string(PipelineSchedule schedule) {
  switch (schedule) {
    case PipelineSchedule::gpipe: return "gpipe";
    case PipelineSchedule::one_f_one_b: return "1f1b";
  }
  throw std::logic_error("to_string: unknown pipeline schedule");
}

}  // namespace tilesim
