#pragma once

#include "core/expected.h"
#include "core/status.h"

#include <QList>
#include <QMap>
#include <QString>

#include <optional>
#include <utility>

namespace scaledesk {

/// One allreduce measured: `bytes` reduced over `ranks` ranks on `nodes` nodes took `seconds`
/// (a communication benchmark point, or a run's allreduce per step divided by its buckets).
struct CommSample {
    int ranks = 2;
    int nodes = 1;
    double bytes = 0;
    double seconds = 0;
    /// The collective: an allreduce, or one of ZeRO-1's two halves of it. A ring reduce-scatter or
    /// allgather of S bytes costs (n−1)·α + (n−1)/n · S/β, half an allreduce: such samples are
    /// fitted as allreduces of twice their time, so one AllreduceModel describes each collective.
    /// Compute is no collective: the benchmark's compute kernel timed on one rank alone
    /// (`aloneS`) and on every rank at once (`seconds`, the slowest rank), its `bytes` 0: how much
    /// ranks that share a node slow each other's compute (PerfModel::contention).
    enum class Op { Allreduce, ReduceScatter, Allgather, Compute } op = Op::Allreduce;
    double aloneS = 0;  ///< Compute only
    /// Compute and after-compute timings: what computed, as the benchmark names it ("kernel":
    /// "conv", or "model" with "config" and "local_batch": that config's own training step).
    QString kernel{};
    /// A collective timed as training meets it (`bench-comm --after_compute`): each call after
    /// `computeS` of compute on every rank and no barrier; `seconds` is the last rank in's (it waits
    /// for none) and `waitS` what the ranks spent in it beyond that, on average: their arrival
    /// imbalance, which a step pays once (PerfModel::arrivalWait).
    bool afterCompute = false;
    double waitS = 0, computeS = 0;
    int kernels = 1;  ///< after compute: how many of the kernel `computeS` ran before each call
    /// An allreduce launched before `kernels` kernels (`computeS`, the ranks' mean while it ran) and
    /// waited for after them (bench-comm --after_compute's third line, "mode": "overlapped"):
    /// `seconds` is the ranks' mean wait after their kernels. It times no collective alone: the
    /// fits leave it out, and PerfModel::overlapShare() reads it.
    bool overlapped = false;
    /// Compute timings: the threads each rank computed with and its host's logical CPUs (0: not
    /// recorded), and the local batch of the config's own step (the "model" kernel; 0: a convolution).
    int threads = 0, hostCpus = 0;
    double kernelLocalBatch = 0;
    /// The model kernel's loader threads beside its compute (bench-comm's "data": "loader",
    /// "data_workers"); -1 where its batches were random or the line does not say.
    int kernelLoaders = -1;
};

/// The collectives as training meets them where the benchmark timed them so: for each collective,
/// ranks and nodes with an after-compute timing, only those (the barrier's timings of the same
/// collective and layout left out); everything else as it is. `dropped` counts what was left out.
QList<CommSample> preferAfterCompute(const QList<CommSample>& samples, int* dropped = nullptr);

/// How a library runs an allreduce of S bytes over n ranks: t = L(n)·α + B(n)·S/β, α (s) the
/// per-message latency, β (bytes/s) the link bandwidth, ⌈log₂n⌉ = l:
/// - ring: L = 2(n−1), B = 2(n−1)/n (bandwidth-optimal: large messages in Open MPI and NCCL, Gloo's);
/// - tree: L = 2l, B = 2(n−1)/n: NCCL's double binary tree (pipelined: reduce up and broadcast down
///   each tree, half the message per tree) and Rabenseifner's halving-doubling (a recursive-halving
///   reduce-scatter, a recursive-doubling allgather) cost the same on this model;
/// - recursive doubling (Open MPI's small messages): L = l, B = l (the whole message each step).
/// At 2 ranks they differ only in how much latency a call pays: timings at one rank count cannot
/// tell them apart, timings at two or more can.
enum class AllreduceAlgorithm { Ring, Tree, RecursiveDoubling };
/// "ring", "tree", "recursive doubling".
QString algorithmName(AllreduceAlgorithm a);
/// (L(n), B(n)) of the algorithm over n ranks, as above; (0, 0) for one rank.
std::pair<double, double> allreduceSteps(AllreduceAlgorithm a, int ranks);

/// One algorithm's α–β fit to the timings of one link class (within a node, or across nodes).
struct AlgorithmFit {
    AllreduceAlgorithm algorithm = AllreduceAlgorithm::Ring;
    double alphaS = 0, betaBytesPerS = 0;
    double relativeRms = 0;  ///< the fit's root-mean-square relative residual
    double time(int ranks, double bytes) const;
};

/// The α–β model of an allreduce of S bytes over n ranks, by the algorithm that fits the timings
/// best (AllreduceAlgorithm; ring where they cannot tell: one rank count timed):
///     ring: t(n, S) = 2(n−1)·α + 2(n−1)/n · S/β
/// A run that spans nodes uses the across-node fit where it was measured (a flat ring is as slow as
/// its slowest link), else the within-node one.
///
/// Where the timings were measured at the same ranks and nodes, between the smallest and the largest
/// size measured there, the measured curve itself is used (linear between neighbouring sizes): a
/// library's collectives change algorithm with the message size, and a straight α–β line cannot
/// follow a step in the curve (Open MPI on one VM: 0.021 s at 48 MiB, 0.25 s at 64 MiB).
/// Gradients go in buckets: S bytes in buckets of B are ⌈S/B⌉ messages of S/⌈S/B⌉ bytes.
struct AllreduceModel {
    double alphaS, betaBytesPerS;            ///< within a node
    double alphaInterS, betaInterBytesPerS;  ///< across nodes; NaN when not measured
    double relativeRms;                      ///< the fit's root-mean-square relative residual
    int samples = 0;
    /// A part (within or across nodes) measured at one message size and rank count only, or whose
    /// timings fit no positive bandwidth: latency cannot be told from bandwidth there, so its α was
    /// taken as 0 and β from the timings.
    bool bandwidthOnly = false;
    /// The timings fitted, as (ranks, nodes, bytes) → mean seconds, sorted by ranks, nodes, bytes.
    QList<CommSample> measured;
    /// Every algorithm's fit, within a node and across nodes, the one used first (α, β above are
    /// its); empty where the link class was not timed.
    QList<AlgorithmFit> within, across;
    /// The rank counts the timings of each link class spanned: with fewer than two, the algorithm was
    /// not told apart (ring used; algorithmSpan() says what the others would give).
    QList<int> withinRanks, acrossRanks;
    /// Across nodes, where the timings had two or more ranks per node: the fits of each (ranks that
    /// share a node share its links), every algorithm's, the chosen one first (as for a link class:
    /// the ring unless its timings span two rank counts and another fits clearly better). A point across
    /// nodes reads the ranks per node nearest its own (the larger on a tie). Empty: one
    /// ranks-per-node timed, `across` for all.
    struct PerNodeFit {
        int ranksPerNode = 1;
        QList<AlgorithmFit> fits;
        QList<int> ranks;  ///< the rank counts its timings spanned
    };
    QList<PerNodeFit> acrossPerNode;
    /// The across-node fits a point of `ranksPerNode` reads (acrossPerNode's nearest); null where
    /// one ranks-per-node (or none) was timed across nodes: `across` then.
    const PerNodeFit* acrossFit(int ranksPerNode) const;
    AllreduceAlgorithm algorithm() const;       ///< within a node
    AllreduceAlgorithm algorithmInter() const;  ///< across nodes
    /// The rank counts the timings spanned whose fit a point of `ranks` on `nodes` reads: its ranks
    /// per node's across nodes (acrossFit), else the link class's.
    const QList<int>& timedRanks(int ranks, int nodes) const;
    /// The fits a point of `ranks` on `nodes` reads were timed at two or more rank counts.
    bool algorithmKnown(int ranks, int nodes) const;
    /// Where the algorithm was not told apart and the line is read (no measured curve at these ranks
    /// and nodes): the least and the most time of a ring and a tree fitted to the same timings (the
    /// two a library switches between for gradients; recursive doubling, for small messages, only
    /// where the fit chose it); else (time, time).
    std::pair<double, double> algorithmSpan(int ranks, int nodes, double bytes) const;
    /// This model with the line of `a` (its fit) in place of the chosen one, in the link class of
    /// `nodes`: what algorithmSpan() compares.
    AllreduceModel withAlgorithm(AllreduceAlgorithm a, int nodes) const;
    AllreduceModel();
    bool acrossNodesMeasured() const;
    /// One allreduce of `bytes` over `ranks` ranks on `nodes` nodes.
    double time(int ranks, int nodes, double bytes) const;
    /// The α–β line alone, without the measured curve.
    double lineTime(int ranks, int nodes, double bytes) const;
    /// True when time() at these ranks, nodes and bytes reads the measured curve.
    bool fromMeasuredCurve(int ranks, int nodes, double bytes) const;
    /// The timings time() reads at these ranks, nodes and bytes: the neighbouring sizes measured
    /// there, or one timing twice where a measured size lies within 1 % of `bytes` (the nearest);
    /// nulls where the curve does not reach `bytes`.
    std::pair<const CommSample*, const CommSample*> curveAround(int ranks, int nodes, double bytes) const;
    /// `bytes` of gradients in buckets of `bucketBytes` (0: one message).
    double bucketedTime(int ranks, int nodes, double bytes, double bucketBytes) const;
};

/// Least squares of the α–β model on the samples: within a node from the one-node samples, across
/// nodes from the others, for each algorithm; the smallest relative residual chooses (the ring
/// unless another's is below 80 % of it and 1 point lower, and the ring where one rank count was timed). A part with a single (n, S) point (every run of a sweep reduces the same
/// gradients), or whose points fit no positive bandwidth, gets α = 0 and β = the mean of
/// 2(n−1)/n · S / t (`bandwidthOnly`). An error when a sample has fewer than 2 ranks or no time.
/// Compute samples are no collective: left out.
Expected<AllreduceModel> fitAllreduce(const QList<CommSample>& samples);
/// fitAllreduce() of the samples of one collective (reduce-scatter and allgather samples count
/// twice their time); an error when there are none.
Expected<AllreduceModel> fitCollective(const QList<CommSample>& samples, CommSample::Op op);

/// A run's mean step at one local batch: what the trainer's step records say.
struct ComputeSample {
    double localBatch = 0;
    double computeS = 0;    ///< forward + backward + optimizer per step
    double backwardS = 0;   ///< the part of it that backward takes (what DDP can overlap with)
    double dataS = 0;       ///< waiting for data per step
    double optimizerS = 0;  ///< the part of compute the optimizer step takes (all of the parameters')
    int dataWorkers = -1;   ///< the loader's worker threads; -1: not known (its wait is taken as it was)
};

/// Compute time per step, affine in the local batch: t(b) = fixed + perSample·b; backward is
/// the same share of it as measured.
struct ComputeModel {
    double fixedS, perSampleS, backwardShare, dataS, relativeRms;
    /// The optimizer step's share of compute; ZeRO-1 updates only its rank's 1/n of the parameters.
    double optimizerShare;
    /// A loader with worker threads prepares the next batches while the step computes: the step
    /// waits only for what the loader takes beyond its compute, wait = max(0, loader − compute).
    /// The loader's time per sample where a run waited for it (wait above 5 % of its compute:
    /// (compute + wait) / local batch, the mean over such runs); NaN where none did (the loader
    /// kept up: its time is not known, only that it is under the compute) or where the loader has
    /// no workers (its time then adds to the step, `dataS`).
    double loaderPerSampleS;
    /// Whether every run's loader had worker threads (the max() above applies).
    bool loaderWorkers = false;
    int samples = 0;
    ComputeModel();
    double time(double localBatch) const { return fixedS + perSampleS * localBatch; }
};

/// Least squares over the samples' (b, compute) points; one local batch only fits a line through
/// the origin (no fixed part), which the result's `samples` shows.
Expected<ComputeModel> fitCompute(const QList<ComputeSample>& samples);

/// How a strategy's communication meets its step:
/// - ddp: bucketed allreduce launched during backward; exposed = max(last bucket, comm − backward)
///   on GPUs; on CPU ranks (PerfModel::cpuRanks), where the benchmark timed allreduces behind
///   compute, exposed = max(last bucket, comm − φ·min(comm, backward)) with φ =
///   PerfModel::overlapShare(), else exposed = comm;
/// - fused (Horovod): one fusion buffer after backward; exposed = comm;
/// - zero1 (DeepSpeed ZeRO-1): one reduce-scatter of the gradients and one allgather of the
///   parameters, after backward; exposed = comm. Each costs half a ring allreduce, unless the two
///   collectives were measured themselves (PerfModel::reduceScatter, ::allgather): a library's
///   reduce-scatter can be far slower than its allreduce.
/// A measured overlap (1 − exposed/comm, from runs with more than one rank) replaces the rule.
struct StrategyComm {
    double bucketBytes = 25e6;
    /// The sizes of the messages a step sends, as the trainer lays them out (ddp's buckets, fused's
    /// buffers): where known, the communication is the sum of their allreduces and ddp's exposed
    /// last bucket is the last of them; empty: ⌈S/B⌉ equal messages.
    QList<double> messageBytes;
    double measuredOverlap;  ///< NaN: the rule above
    StrategyComm();
};

/// The overlap a strategy achieved in runs of more than one rank: 1 − Σ exposed / Σ communication
/// over the (communication, exposed) seconds of their steps. NaN without communication.
double measuredOverlap(const QList<QPair<double, double>>& commAndExposed);

/// What a step of `strategy` at `ranks` ranks costs, and what an epoch does. Compute is the fitted
/// compute × PerfModel::contention.
struct StepPrediction {
    double computeS, dataS, commS, exposedS, stepS;
    double waitS = 0;  ///< the arrival wait (PerfModel::arrivalWait), in commS and exposedS
};

struct EpochPrediction {
    int ranks = 1, nodes = 1;
    double localBatch, globalBatch, steps, epochS, throughput, speedup, efficiency, nodeHours;
    EpochPrediction();
};

/// E[max of n independent standard normal draws] (0 for one; 1/√π for two; about 2.54 for 128),
/// by numerical integration of n·x·φ(x)·Φ(x)^(n−1).
double expectedMaxOfNormals(int n);

/// The fitted model of one (profile, config): compute, data wait, the allreduce, the gradients'
/// size, and each strategy's communication.
struct PerfModel {
    ComputeModel compute;
    AllreduceModel comm;
    AllreduceModel reduceScatter, allgather;  ///< as allreduce-equivalents; `samples` 0: not measured
    double gradientBytes = 0;                 ///< parameters × 4 (fp32 gradients)
    /// CPU ranks: backward and the collectives share the cores (no GPU stream, no copy engine of
    /// their own), so ddp's rule exposes all of its communication, as fused's does.
    bool cpuRanks = false;
    /// The benchmark's compute kernel alone and on every rank at once (CommSample::Op::Compute),
    /// at the ranks and nodes it ran.
    QList<CommSample> contentionSamples;
    /// The compute of the runs of one rank per node (nothing shared their cores), fitted as
    /// `compute` is; none where no run had one rank per node. contention()'s reference.
    std::optional<ComputeModel> soloCompute;
    /// How much slower a rank computes at `ranks` ranks on `nodes` nodes than alone, on CPU ranks
    /// (ranks that share a node's cores, caches and memory bandwidth; a GPU computes on its own),
    /// at the layout the benchmark ran, else the largest layout of as many ranks per node, else 1
    /// (not measured). 1 for one rank, and on GPUs. Where the benchmark also timed collectives after
    /// the same kernel (waitSamples), the kernel's mean time between collectives: a step computes
    /// between its collectives, which leave the caches to refill and the cores to the other ranks'
    /// copies; else the slowest rank's time with every rank computing at once. Over the time the
    /// same step takes alone: where the kernel is the config's own step and runs of one rank per
    /// node measured it (soloCompute), theirs at the kernel's local batch; else the benchmark's
    /// lone rank's (contentionReference).
    double contention(int ranks, int nodes) const;
    /// What contention() divides by for `kernel`: the solo runs' compute at its local batch, or
    /// its lone rank's time; `fromRuns` says which.
    double contentionReference(const CommSample& kernel, bool* fromRuns = nullptr) const;
    /// The benchmark's compute timing contention() reads at this layout (the latest there); null
    /// where there is none.
    const CommSample* contentionSample(int ranks, int nodes) const;
    /// contention()'s between-collectives kernel time at the layout it reads (its mean over the
    /// after-compute timings of the compute sample's kernel); 0 where there is none.
    double computeBetweenCollectives(int ranks, int nodes) const;
    /// The mean per kernel of the after-compute timings of `kernel` (a compute sample) at its layout; 0: none.
    double betweenCollectives(const CommSample& kernel) const;
    /// The after-compute collectives' timings (CommSample::afterCompute), for arrivalWait().
    QList<CommSample> waitSamples;
    /// The wait of a step's first collective for the last rank to finish computing, as a share of
    /// the step's compute: Σ wait / Σ compute over the after-compute timings at this layout, else
    /// at the largest layout of as many ranks per node, else 0 (not measured). 0 for one rank.
    /// Read at another rank count m than `ranks` = n, it grows as stragglers do: a rank waits, on
    /// average, for the slowest of n draws from the ranks' spread σ, the mean wait σ·e(n) with e
    /// the expected maximum of n standard normals (expectedMaxOfNormals), so the share is scaled
    /// by e(n)/e(m).
    double arrivalWait(int ranks, int nodes) const;
    /// The allreduces timed behind compute (CommSample::overlapped), for overlapShare().
    QList<CommSample> overlapSamples;
    /// The share φ of an allreduce that hides behind compute on these ranks: Σ (after-compute call
    /// − overlapped call) / Σ after-compute allreduce, over the sizes timed both ways after the same
    /// kernel at this layout (else the largest layout of as many ranks per node), a call being the
    /// ranks' mean compute, collective and wait. Bounded to [−1, 1]; below 0, computing while the
    /// collective runs costs more than taking turns. NaN where not measured.
    double overlapShare(int ranks, int nodes) const;
    QMap<QString, StrategyComm> strategies;  ///< by strategy name; one not here: its default bucket and its rule

    StepPrediction step(const QString& strategy, int ranks, int nodes, double localBatch) const;
    /// An epoch is one pass over the same samples at any size (the trainer's `Nsamples`). Weak
    /// scaling: the local batch stays and the global batch grows with the ranks (NERSC's rule), so
    /// an epoch takes fewer steps. Strong: the global batch stays, the local batch shrinks, the
    /// steps stay. `base*` is the smallest point (its ranks, local batch and samples per epoch);
    /// speedup and efficiency are against it.
    EpochPrediction epoch(const QString& strategy, int ranks, int nodes, bool weak, int baseRanks, double baseLocalBatch,
                          double baseSamplesPerEpoch, double epochs = 1) const;
};

}  // namespace scaledesk
