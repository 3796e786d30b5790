#pragma once

#include "device/stepclock.h"
#include "dist/comm.h"
#include "model/unet.h"

#include <torch/optim/adam.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

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
    double commSeconds = 0.0;     ///< the collectives' time: the union of their launch → completion intervals (CPU backends),
                                  ///< or their time on the device (nccl, which runs them one after another on its stream)
    double exposedSeconds = 0.0;  ///< time the training stream waited on them
};

class GradientSync {
public:
    /// `clock` times the waits as the device sees them; it is the training step's clock.
    explicit GradientSync(StepClock& clock) : m_clock(clock) {}
    virtual ~GradientSync() = default;
    virtual std::string strategy() const = 0;

    /// Sets gradients to zero (in place, so bucket views survive).
    virtual void zeroGrad() = 0;
    /// Called after loss.backward(): gradients are averaged over ranks when it returns (for
    /// zero1: this rank's shard of them).
    virtual void afterBackward() = 0;
    /// The tensors that hold this rank's gradients after afterBackward(), as step() will use them:
    /// what the fp16 loss scaler unscales and checks.
    virtual std::vector<torch::Tensor> gradients() = 0;
    /// True when gradients() is this rank's shard only (zero1): a check of them must be agreed on.
    virtual bool shardedGradients() const { return false; }
    /// Applies the Adam update with learning rate `lr`; parameters are equal on every rank after it.
    virtual void step(double lr) = 0;

    /// Makes `optimizer` hold the full Adam state (zero1 gathers its shards; a collective on every
    /// rank), so a checkpoint can be resumed with any strategy.
    virtual void exportOptimizerState() {}
    /// Takes the Adam state now in `optimizer` (after a checkpoint load and broadcast).
    virtual void importOptimizerState() {}

    /// Timings since the last call, then reset. Call after the step's clock settled.
    SyncTimes takeTimes();

    /// The gradient noise (dist/gradnoise.h) as the strategies see it for free: each step, the
    /// squared norm of this rank's gradient before the average (a batch of B_local) and of the
    /// averaged one (B_global), summed on the device (no host synchronisation). After a step:
    /// counts its norms with `weight` (1/scale² under fp16, whose gradients are scaled; 0: a
    /// skipped step, not counted). Called after every step, measured or not.
    void countNoiseStep(double weight);
    /// The epoch's means over steps and ranks of the two squared norms, then reset: a collective on
    /// every rank. `steps` 0: none measured (one rank, or --gns off).
    struct NoiseSums {
        double localSq = 0, globalSq = 0;
        int64_t steps = 0;
    };
    NoiseSums takeNoise(Communicator& comm);
    /// Take the norms at every `every`-th step (0: never; --gns_every): one dot product per bucket
    /// before its collective and one after, a pass over the gradients each.
    void setNoiseEvery(int every) { m_noiseEvery = every; }

protected:
    /// Adds flat·flat to this step's squared norm before the average (`local`) or after it.
    void noteSquaredNorm(const torch::Tensor& flat, bool local);
    bool measuresNoise() const { return m_noiseEvery > 0 && m_noiseStep % m_noiseEvery == 0; }
    /// A wait of the training stream on collectives, between two marks of the clock.
    void recordWait(int fromMark, int toMark) { m_waits.emplace_back(fromMark, toMark); }
    /// A collective of the step and when it was launched (host clock).
    void recordCollective(CommHandle handle, std::chrono::steady_clock::time_point launched)
    {
        m_collectives.push_back({std::move(handle), launched});
    }
    /// Forgets what was recorded (collectives made outside a step, for a checkpoint).
    void discardTimes()
    {
        m_waits.clear();
        m_collectives.clear();
    }
    StepClock& m_clock;

private:
    struct Collective {
        CommHandle handle;
        std::chrono::steady_clock::time_point launched;
    };
    std::vector<std::pair<int, int>> m_waits;
    std::vector<Collective> m_collectives;
    int m_noiseEvery = 1;
    int64_t m_noiseStep = 0;  ///< steps counted by countNoiseStep(), measured or not
    torch::Tensor m_stepLocalSq, m_stepGlobalSq, m_epochLocalSq, m_epochGlobalSq;
    int64_t m_noiseSteps = 0;  ///< steps measured this epoch
};

/// Creates the strategy; parameters must already be equal on every rank (see broadcastState()).
std::unique_ptr<GradientSync> makeGradientSync(const std::string& strategy, Communicator& comm, UNet& model, torch::optim::Adam& optimizer,
                                               StepClock& clock, double bucketCapMb, double fusionMb, double zeroBucketMb);

/// Broadcasts rank 0's parameters and Adam state (moments and step counts) to every rank.
void broadcastState(Communicator& comm, UNet& model, torch::optim::Adam& optimizer);

}  // namespace scaledesk::train
