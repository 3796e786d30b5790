#pragma once

#include "dist/comm.h"
#include "model/unet.h"

#include <torch/optim/adam.h>

#include <memory>
#include <string>

namespace scaledesk::train {

/// Data-parallel strategies. Each owns how gradients are laid out, synchronised and applied.
/// - `ddp`: gradients live in flat buckets (reverse parameter order, a 1 MiB first bucket, then
///   `bucketCapMb`); a post-accumulate hook per parameter launches a bucket's allreduce as soon as
///   all its gradients are ready, in bucket order on every rank; the end of backward waits.
/// - `fused`: Horovod-style: after backward, one allreduce per fusion buffer (`fusionMb`).
/// - `zero1`: DeepSpeed ZeRO-1: parameters and gradients in one flat buffer cut into buckets of
///   `zeroBucketMb` (DeepSpeed's reduce_bucket_size / allgather_bucket_size; zeroLayout in
///   buckets.h); after backward a reduce-scatter per bucket, Adam on this rank's shard only (its
///   moments live only here), then an allgather per bucket of the updated parameters.
/// - `none`: one process; plain gradients and the fused Adam step.
struct SyncTimes {
    double commSeconds = 0.0;     ///< union of the collectives' launch → completion intervals
    double exposedSeconds = 0.0;  ///< time the training thread waited on them
};

class GradientSync {
public:
    virtual ~GradientSync() = default;
    virtual std::string strategy() const = 0;

    /// Sets gradients to zero (in place, so bucket views survive).
    virtual void zeroGrad() = 0;
    /// Called after loss.backward(): gradients are averaged over ranks when it returns (for
    /// zero1: this rank's shard of them).
    virtual void afterBackward() = 0;
    /// Applies the Adam update with learning rate `lr`; parameters are equal on every rank after it.
    virtual void step(double lr) = 0;

    /// Makes `optimizer` hold the full Adam state (zero1 gathers its shards; a collective on every
    /// rank), so a checkpoint can be resumed with any strategy.
    virtual void exportOptimizerState() {}
    /// Takes the Adam state now in `optimizer` (after a checkpoint load and broadcast).
    virtual void importOptimizerState() {}

    /// Timings accumulated since the last call, then reset.
    SyncTimes takeTimes();

protected:
    SyncTimes m_times;
};

/// Creates the strategy; parameters must already be equal on every rank (see broadcastState()).
std::unique_ptr<GradientSync> makeGradientSync(const std::string& strategy, Communicator& comm, UNet& model, torch::optim::Adam& optimizer,
                                               double bucketCapMb, double fusionMb, double zeroBucketMb);

/// Broadcasts rank 0's parameters and Adam state (moments and step counts) to every rank.
void broadcastState(Communicator& comm, UNet& model, torch::optim::Adam& optimizer);

}  // namespace scaledesk::train
