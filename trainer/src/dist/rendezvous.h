#pragma once

// The TCPStore rendezvous that the gloo and nccl backends share (env:// semantics: rank 0 hosts the
// store at MASTER_ADDR:MASTER_PORT), and the report that names the ranks that stopped answering.
// Built only with a libtorch that has c10d (USE_C10D_GLOO or USE_C10D_NCCL).

#include "dist/comm.h"

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <chrono>
#include <string>

namespace scaledesk::train {

/// Connects to (rank 0: hosts) the job's store; CommError says where and what it waited for.
c10::intrusive_ptr<c10d::TCPStore> openRendezvousStore(const DistEnv& env, std::chrono::milliseconds timeout);

/// After a collective failed on this rank: records it in the store, waits up to 3 s for the other
/// ranks to record theirs, and returns "; rank(s) not responding: 0, 3" for the ones that never do
/// (or that rank 0, the store's host, is unreachable). Empty when every rank saw the failure.
std::string silentRanks(c10d::TCPStore& store, int rank, int size);

/// The first line of an exception's text, at most 300 characters.
std::string firstLine(const std::string& text);
/// "300.0 s"
std::string secondsText(std::chrono::milliseconds ms);

}  // namespace scaledesk::train
