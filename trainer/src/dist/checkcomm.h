#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <vector>

namespace scaledesk::train {

class Communicator;

/// What `scaledesk-train check-comm` checks: every collective of the Communicator interface, on
/// tensors of `device`, against the result computed on the CPU from the same inputs.
struct CheckCommOptions {
    std::vector<int64_t> numels{1, 1000, 1 << 20};  ///< elements per rank
    c10::Device device{c10::DeviceType::CPU};
};

/// Runs the checks on every rank. Rank 0 prints one JSON line per check ({"check": "allreduce", "op":
/// "sum", "dtype", "numel", "ok", "max_error", "seconds"}) and a summary line. Returns the number of
/// failed checks (the same on every rank).
int runCheckComm(Communicator& comm, const CheckCommOptions& options);

}  // namespace scaledesk::train
