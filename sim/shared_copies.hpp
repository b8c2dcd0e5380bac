#pragma once
// Which destinations of read-only broadcasts (Transfer::read_only_copies) share their source's bytes in
// a functional run instead of receiving a copy: a table block broadcast to 127 index groups is then
// moved once, not 127 times, and the vertices of every group read the one block. Engine-internal.
#include <cstdint>
#include <vector>

#include "sim/program.hpp"

namespace tilesim::sim {

// The source a shared copy reads its bytes from.
struct SharedSource {
  bool shared = false;
  BufferRef src;  // the transfer's source region; it may itself lie in a shared copy
};

// One entry per buffer (index = BufferId). Checks what the engine can see of the transfers' promise and
// throws std::logic_error naming the program, superstep and transfer when it is broken: a destination
// that is not a whole buffer received contiguously, that a vertex or transfer uses before the exchange
// (in an earlier superstep or the same one's compute set or exchange) or that a later transfer
// overwrites, or a source that a transfer of this or a later exchange overwrites. That vertices do not
// write the copies or the source afterwards stays the program builder's promise.
std::vector<SharedSource> find_shared_copies(const Program& program);

}  // namespace tilesim::sim
