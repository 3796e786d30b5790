#pragma once

#include "dist/comm.h"

#include <torch/nn/module.h>

#include <cstdint>
#include <string>
#include <vector>

namespace scaledesk::train {

/// The small exchanges the trainer makes besides gradients, on every rank at the same point. Every
/// one is a collective: all ranks call it, or none.

/// Each rank's `text` (at most 255 bytes), in rank order.
std::vector<std::string> allgatherText(Communicator& comm, const std::string& text);

/// The mean of `value` over ranks.
double allreduceMean(Communicator& comm, double value);

/// Whether any rank has `flag` set.
bool anyRank(Communicator& comm, bool flag);

/// The ranks whose `value` differs from rank 0's, as "1, 3" (empty when all agree).
std::string ranksDifferingFromRoot(Communicator& comm, int64_t value);

/// --check_replicas: throws naming the ranks whose parameters are not bit-identical to rank 0's.
void checkReplicas(Communicator& comm, const torch::nn::Module& model, int64_t step);

}  // namespace scaledesk::train
