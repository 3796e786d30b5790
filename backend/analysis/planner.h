#pragma once

#include "analysis/epochscsv.h"
#include "analysis/learningcurve.h"
#include "analysis/perfmodel.h"
#include "core/expected.h"
#include "core/status.h"

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>
#include <vector>

namespace scaledesk {

class RunStore;
struct RunSummary;
struct RunPoint;

/// What one run of a sweep tells the planner: its shape, and the mean of its step records after
/// the warm-up epochs (rank 0's; seconds per step).
struct PlanRunInput {
    QString runId, strategy;
    QString config;      ///< the named config it trained (manifest `config`); empty: not recorded
    QString configFile;  ///< the YAML it was launched from, where not the workspace's configs/unet.yaml
    int ranks = 1, nodes = 1;
    double localBatch, samplesPerEpoch;
    double computeS, backwardS, dataS, commS, exposedS;  ///< per step
    double optimizerS;                                   ///< per step: the part of compute the optimizer step takes
    double epochS;                                       ///< measured mean epoch (training), NaN when none
    double epochCv;                                      ///< the epochs' coefficient of variation (std / mean)
    double gradientBytes;                                ///< parameters × 4
    double bucketBytes;                                  ///< the strategy's bucket (ddp, zero1) or fusion buffer (fused)
    /// The bytes of each collective a step of each strategy sends, as the trainer laid them out
    /// (manifest.json `comm_message_bytes`); empty from a trainer that did not record them.
    QMap<QString, QList<double>> messageBytes;
    int steps = 0;           ///< step records averaged
    int dataWorkers = -1;    ///< the loader's worker threads (manifest `num_data_workers`); -1: not recorded
    bool cpu = false;        ///< trained on CPU ranks (manifest `device`)
    int threadsPerRank = 0;  ///< compute threads per rank (manifest `threads_per_rank`); 0: not recorded
    int hostCpus = 0;        ///< rank 0's host's logical CPUs (manifest `host_cpus`); 0: not recorded
    double globalBatch;      ///< manifest `global_batch_size`
    QList<EpochRow> epochs;  ///< every epoch of epochs.csv (validation losses, training times), warm-up included
    PlanRunInput();
};

/// Allreduce timings written by `scaledesk-train bench-comm` (JSON lines; other kinds skipped).
/// An error names the file and line of what cannot be read.
Expected<QList<CommSample>> loadCommSamples(const QString& path);

/// The timings of a profile's calibrations (`scaledesk calibrate`): the mirrored comm.jsonl of each
/// of its completed bench-comm jobs in the workspace, oldest first; each file used goes to `sources`.
/// None is an empty list; a file that cannot be read is an error naming it.
Expected<QList<CommSample>> loadCalibration(const RunStore& store, const QString& profile, QStringList* sources);

/// A size of the runs left out of the fit and predicted from the rest (leave one size out): the
/// model-form part of the ranges is the root mean square of their log errors.
struct HeldOutPoint {
    QString strategy;
    int ranks = 1, nodes = 1;
    /// Epoch (training) time: predicted with its range, and the held-out runs' mean; predicted NaN:
    /// not predictable without them.
    double predictedS, lowS, highS, measuredS;
    QString why;  ///< why not predictable (what the rest never measured)
    /// Why the prediction lies outside what the model describes (PlanPoint::outsideModel).
    QStringList outsideModel;
    HeldOutPoint();
    bool predicted() const;   ///< both the prediction and the measurement are there
    double error() const;     ///< predicted / measured − 1; NaN when not predicted
    double logError() const;  ///< ln(predicted / measured); NaN when not predicted
};

struct PlanOptions {
    QList<int> nodes;      ///< node counts to predict
    int ranksPerNode = 0;  ///< 0: the most ranks per node the sweep's runs had
    enum class Scaling { Auto, Weak, Strong } scaling = Scaling::Auto;
    QStringList strategies;  ///< empty: the sweep's
    double epochs = 1;       ///< node-hours for this many epochs
    double gpuHourPrice;     ///< cost = GPU-hours × this; NaN: no cost column
    /// Time-to-target: the validation loss to reach (the learning curve, LearningCurve, fitted to the
    /// runs' validation losses); NaN: no time-to-target.
    double targetLoss;
    /// The batch to predict at (a launch's): weak scaling, the local batch per rank; strong, the
    /// global batch. NaN: the base run's.
    double localBatch, globalBatch;
    QString profile;  ///< named in the commands that would measure what is missing (PlanPoint::measureWith)
    /// The ranges' parts that refit the model (planuncertainty.cpp): each size of the runs left out
    /// and predicted from the rest, and the bootstrap's replicas over repeated measurements. The
    /// refits themselves turn both off.
    bool crossValidate = true;
    int bootstrapReplicas = 200;
    /// The held-out sizes of these runs and timings, already predicted (makePlans' later ranks-per-
    /// node shapes): taken as they are instead of refitted. Unset: crossValidate refits them.
    std::optional<QList<HeldOutPoint>> heldOut;
    PlanOptions();
};

/// The ranges' nominal coverage: a point's range is its prediction ×/÷ e^(z·σ), z the standard
/// normal quantile that leaves (1 − coverage)/2 above (σ: PlanPoint::rangeSigma).
inline constexpr double kPlanRangeCoverage = 0.90;
/// How the plan's text, its plots and the window name a range: "90 % range".
QString planRangeName();
/// What the coverage benchmark measured of the ranges (tests/bench/planner/coverage.py; docs/
/// planner.md, "The pooled model form"): how many runs they held of those they predicted without
/// them, on one node and on two sandbox nodes. Said wherever the ranges are described.
QString planRangeCoverageMeasured();

/// Strategy `s` at `ranks` on `nodes`, predicted by makePlan of `fitted` (with `options`, whose
/// nodes, ranks per node, strategies and batch are set here: weak at the measured runs' local
/// batch, strong at their global batch, as options.scaling says), beside the mean epoch of the runs
/// of `runs` there. The one rule for leaving a size out (the plan's model form) and for
/// `scaledesk plan-check`.
HeldOutPoint predictHeldOut(const QString& sweep, const std::vector<PlanRunInput>& fitted, const std::vector<PlanRunInput>& runs,
                            const QString& s, int ranks, int nodes, const QList<CommSample>& timings, const QStringList& sources,
                            PlanOptions options);

/// One predicted point, with its range (kPlanRangeCoverage, nominal): σ (in log space) combines
/// the step's spread (the compute fit's residuals, or with too few local batches to have any the
/// measured epochs' spread, and the allreduce fit's), the parameters' (the bootstrap's) and, at a
/// point no run measured, the model's form (leave one size out), widened with the doublings of rank
/// count beyond the runs and across nodes where no run was (planuncertainty.cpp).
struct PlanPoint {
    QString strategy;
    int nodes = 1, ranks = 1;
    double localBatch, stepS, computeS, exposedCommS, epochS, epochLowS, epochHighS, throughput, speedup, efficiency, efficiencyLow,
        efficiencyHigh, nodeHours, gpuHours, cost;
    double measuredEpochS;      ///< a run of the sweep at this point (mean over its repetitions), else NaN
    double measuredEfficiency;  ///< its efficiency against the measured base run (the report's definition), else NaN
    bool extrapolated = false;  ///< more than 8× the largest rank count measured
    double rangeSigma = 0;      ///< σ of ln(epoch): the range is epoch ×/÷ e^(z·σ) (before rangeNotes' widening)
    /// The model-form term's weight w (its variance is σ_model² · w): 0 where a run of this strategy
    /// measured this point (its layout and local batch), else the doublings of rank count beyond the
    /// largest run (at least 1), + 1 across nodes where no run was.
    double extrapolationWeight = 0;
    /// What this prediction needs that was never measured (plangaps.h), and the commands that
    /// measure it. Not empty: the point has no predicted numbers (NaN), only these.
    QStringList notMeasured, measureWith;
    /// The efficiency range reached past 100 % and was cut there: no run measured superlinear
    /// scaling. (The base point's efficiency is 1 by definition, with no range.)
    bool efficiencyClipped = false;
    /// Why the epoch range is wider than σ says: a message read off the timings across a step in them
    /// (curvesteps.h), the range spanning both sizes' times.
    QStringList rangeNotes;
    /// The range spans a ring's and a tree's allreduce: the timings were at one rank count (one of rangeNotes says so).
    bool algorithmSpanned = false;
    /// Why this prediction lies outside what the model describes, each reason in words (empty: it
    /// does not, as far as the planner can tell): a point no run measured that is more than 8× the
    /// largest run, CPU ranks of more threads than their host has CPUs, compute contention never
    /// measured at its ranks per node, or measured by a calibration whose lone step disagrees with
    /// the runs' compute by more than 10 % (planlimits.cpp). The point keeps its numbers and range.
    QStringList outsideModel;
    bool base = false;  ///< the base point (the smallest run's ranks, one node): efficiency 1 by definition
    /// With a target loss: the global batch; the epochs the curve takes to reach the target
    /// (samples to target / samples per epoch, and its range from the curve's 90 % range); the training
    /// time until the epoch whose validation reaches it, ⌈epochs⌉ × epoch + the runs' first-epoch
    /// start-up (the target is seen at epoch ends), with its range; node-hours to it; inf where the
    /// curve levels off above the target. The measured one: the runs at this point that reached the
    /// target, their mean training time up to that epoch. NaN without a target.
    double globalBatch, epochsToTarget, epochsToTargetLow, epochsToTargetHigh, timeToTargetS, timeToTargetLowS, timeToTargetHighS,
        nodeHoursToTarget, measuredTimeToTargetS;
    bool targetBeyondCurve = false;  ///< the target needs more samples than any run saw (the curve extrapolated)
    PlanPoint();
};

struct Plan {
    QString sweep;
    bool weak = true;
    int baseRanks = 1;
    double baseLocalBatch, baseSamplesPerEpoch;
    int measuredMaxRanks = 1;
    double epochs = 1;  ///< what the node-hours are for
    PerfModel model;
    double targetLoss;    ///< NaN: no time-to-target
    LearningCurve curve;  ///< fitted when there is a target
    /// The gradient noise scale the trainer measured over the runs' epochs, as (validation loss,
    /// B_simple) (gradientNoiseByLoss), and the runs' global batches: the noise scale plot's.
    QList<QPair<double, double>> noiseByLoss;
    QList<double> runBatches;
    QList<PlanPoint> points;  ///< by strategy, then nodes
    /// The ranges' model-form σ (log): from the held-out sizes where any could be predicted
    /// (`modelSigmaMeasured`), pooled with the assumed kAssumedModelSigma (kModelSigmaPriorWeight),
    /// else the assumed one alone; the held-out points themselves.
    double modelSigma = 0;
    bool modelSigmaMeasured = false;
    QList<HeldOutPoint> heldOut;
    int bootstrapReplicas = 0;  ///< the bootstrap's replicas (0: nothing was measured twice to resample)
    QStringList inputs;         ///< where each part of the model came from, in words
    QStringList warnings;
    Plan();

    QString csv() const;
    QString markdown() const;
    /// What the ranges hold, in a sentence (the launch dialog's note under its table).
    QString rangeSummary() const;
};

/// Fits the model to the runs (and the benchmark's timings) and predicts every requested point.
/// Errors say what is missing: no runs with step records, no communication measured while more than
/// one rank is asked for.
Expected<Plan> makePlan(const QString& sweep, const std::vector<PlanRunInput>& runs, const QList<CommSample>& benchmark,
                        const QStringList& benchmarkSources, const PlanOptions& options);

/// What a sweep's plan is made from: its runs (after the warm-up epochs; the loaders' warnings),
/// the collective timings (`benchmarkFiles`, else the calibrations of the profile the sweep ran on,
/// with their files in `sources`), the profile, and the strategies it can predict (the trainer's and
/// any the sweep ran).
struct SweepPlanInputs {
    std::vector<PlanRunInput> runs;
    QList<CommSample> timings;
    QStringList sources, warnings, strategies;
    QString profile;
};
Expected<SweepPlanInputs> loadSweepPlanInputs(const RunStore& store, const QString& sweep, int warmupEpochs,
                                              const QStringList& benchmarkFiles);

/// A sweep's plan, as `scaledesk plan` and the Scaling view make it: the sweep's runs (after
/// `warmupEpochs`), and the timings of `benchmarkFiles`, or with none, the calibrations of the
/// profile the sweep ran on (loadCalibration). With no `options.nodes`, the node counts its runs
/// had. The loaders' warnings come first in the plan's.
Expected<Plan> planForSweep(const RunStore& store, const QString& sweep, int warmupEpochs, const QStringList& benchmarkFiles,
                            PlanOptions options);

/// The planner's inputs from a sweep's mirrors: manifest.json, epochs.csv and metrics.jsonl of each
/// finished or running run; runs that cannot be used are named in `warnings`.
Expected<std::vector<PlanRunInput>> loadPlanInputs(const RunStore& store, const QString& sweep, int warmupEpochs, QStringList* warnings);
/// loadPlanInputs() of any runs (their index rows).
Expected<std::vector<PlanRunInput>> loadPlanInputsOf(const RunStore& store, const QList<RunSummary>& rows, int warmupEpochs,
                                                     QStringList* warnings);

/// What the launch dialog shows before a sweep is launched: the model fitted to the completed
/// training runs of the same config on the same profile (any sweep), with the profile's
/// calibrations, predicted for each point's strategy at its nodes and ranks per node (weak scaling
/// unless the points are strong), at the points' batch. An error says what is missing. `task`
/// "command": the completed runs of the user's code launched from the run definition of that name
/// (RunRecord::configName, the definition's file name without .yaml).
Expected<Plan> planForLaunch(const RunStore& store, const QString& profile, const QString& configName, const QList<RunPoint>& points,
                             const QString& task = QString());

/// Draws the plan's plots into a folder in each image format (the GUI library's renderer).
using PlanRenderer = std::function<Status(const Plan& plan, const QString& dir, const QStringList& formats, QStringList* written)>;

/// The plan into `dir` (created) in each of `formats`: csv (plan.csv), md (plan.md), and png, svg,
/// pdf (the plots, drawn by `render`; an error without one). An unknown format is an error before
/// anything is written; the paths written go to `written`.
Status writePlan(const Plan& plan, const QString& dir, const QStringList& formats, const PlanRenderer& render, QStringList* written);

}  // namespace scaledesk
