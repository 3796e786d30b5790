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

/// A stop request (SIGUSR1/SIGTERM on any rank) agreed by all ranks at the same step, without a
/// collective after every step: each check is an allreduce that also carries rank 0's count of
/// steps until the next one, so that the checks fall about `intervalSeconds` of steps apart and
/// every rank makes them at the same steps. 0 checks after every step. With one rank the request
/// is read after every step (no collective to save).
class StopAgreement {
public:
    explicit StopAgreement(double intervalSeconds) : interval_(intervalSeconds) {}

    /// After every training step (on every rank), with the step's seconds: true when all ranks stop
    /// after this step. A collective at the check steps.
    bool afterStep(Communicator& comm, bool requested, double stepSeconds);

    /// A check now, outside the step loop (the end of an epoch): a collective on every rank.
    bool now(Communicator& comm, bool requested);

    /// The steps until the next check: interval / mean step seconds, at least 1 and at most 1000
    /// (so that a run of very short steps still stops within a bounded number of them).
    static int64_t stepsBetweenChecks(double intervalSeconds, double seconds, int64_t steps);

    /// The collectives it has made so far.
    int64_t checks() const { return checks_; }

private:
    double interval_;
    int64_t untilCheck_ = 1;
    double secondsSinceCheck_ = 0.0;
    int64_t stepsSinceCheck_ = 0;
    int64_t checks_ = 0;
};

/// The ranks whose `value` differs from rank 0's, as "1, 3" (empty when all agree).
std::string ranksDifferingFromRoot(Communicator& comm, int64_t value);

/// --check_replicas: throws naming the ranks whose parameters are not bit-identical to rank 0's.
void checkReplicas(Communicator& comm, const torch::nn::Module& model, int64_t step);

}  // namespace scaledesk::train
