#pragma once

#include <string>

namespace scaledesk::train {

/// One line for a failed NCCL collective, from the exception ProcessGroupNCCL raised: the rank and
/// the operation first, then what happened in words a user can act on (a timeout and its limit,
/// two ranks on one GPU, a communicator aborted by an earlier failure, a peer that went away),
/// then NCCL's own first line. `silent` names the ranks that stopped answering (silentRanks()).
std::string describeNcclFailure(int rank, const std::string& op, const std::string& what, const std::string& limit,
                                const std::string& silent);

}  // namespace scaledesk::train
