#pragma once

#include "analysis/epochscsv.h"

#include "runs/runrecord.h"
#include <QPair>

#include <QJsonObject>
#include <QMap>

#include <optional>

namespace scaledesk {

/// What the report reads for one run of a sweep (all of it from the local mirror).
struct ReportRun {
    RunRecord record;
    EpochTable epochs;
    QJsonObject manifest;
    QMap<QString, QString> config;  ///< resolved and flattened (configresolve.h); empty if unknown
};

struct ReportOptions {
    /// The first epochs left out of every average; -1: by the runs' definition: 0 when every run was
    /// imported from itwinai (its report averages every epoch, the first included), else 1.
    int warmupEpochs = -1;
    std::optional<double> targetLoss;  ///< time-to-target; default: see ScalingReport::target
    int minStepsPerEpoch = 10;         ///< fewer steps per epoch per rank than this is warned about
    /// Epoch time as training plus validation (wall_s), instead of training alone (train_s, the
    /// NERSC log's "Time taken for epoch" and itwinai's definition).
    bool includeValidation = false;
};

/// One run's numbers (after warm-up).
struct ReportRunRow {
    QString runId, strategy, state;
    int nodes = 0, ranksPerNode = 0, world = 0, repetition = 0;
    bool used = false;  ///< counted in its group's averages
    int epochsUsed = 0;
    double epochS, samplesPerEpoch, throughput, stepsPerEpoch, computeS, commS, dataS, otherS, bestValLoss, timeToTargetS;
    double validationS;  ///< validation time per epoch (val_s), apart from epochS unless includeValidation
    double energyWh;     ///< GPU energy of the whole run (every epoch's gpu_energy_wh, all ranks); NaN without telemetry
    double gpuUtilPct;   ///< mean GPU utilisation over the epochs after warm-up; NaN without telemetry
    /// The profiler's computation share of an itwinai run (manifest computation_fraction); then
    /// computeS = computeFraction × epochS and otherS the rest. NaN for ScaleDesk's own runs.
    double computeFraction;
    ReportRunRow();
};

/// One strategy × world size: the mean over its repetitions.
struct ReportGroupRow {
    QString strategy;
    int world = 0, nodes = 0, repetitions = 0;       ///< repetitions counted
    double epochS, epochSStd, epochSMin, epochSMax;  ///< mean and spread over repetitions
    double samplesPerEpoch, throughput;
    double speedup;                         ///< T̄(n_min) / T̄(n), n_min = the strategy's smallest world size
    double throughputSpeedup;               ///< X(n) / X(n_min)
    double ideal;                           ///< n / n_min
    double efficiency;                      ///< X(n) / (X(n_min) · n / n_min): strong or weak, whichever the samples say
    double strongEfficiency;                ///< S / (n / n_min)
    double weakEfficiency;                  ///< T̄(n_min) / T̄(n)
    double computeS, commS, dataS, otherS;  ///< per epoch, mean over repetitions
    double validationS;                     ///< validation per epoch, mean over repetitions
    double stepsPerEpoch;                   ///< mean over repetitions
    double timeToTargetS;                   ///< mean over the repetitions that reached the target
    double energyWh, gpuUtilPct;            ///< mean over the repetitions that have telemetry
    double computeFraction;                 ///< mean over the repetitions (itwinai runs' profiler share)
    int reachedTarget = 0;
    ReportGroupRow();
};

/// Where a group's epoch goes, as docs/backend.md defines the breakdown: shares (0..1) of its
/// training + validation time per epoch: compute, exposed communication, data wait, other (training
/// time − the three, at least 0) and validation. report.md and the time-breakdown plot both show
/// these, so they never disagree. NaN where a part is unknown.
struct TimeShares {
    double compute, comm, data, other, validation;
};
/// `includesValidation`: the group's epoch time already includes validation (ScalingReport::includesValidation).
TimeShares timeShares(const ReportGroupRow& group, bool includesValidation);

/// The scaling report of one sweep (itwinai-scaling.md §7.4). Warnings are part of the result:
/// too few steps per epoch, missing repetitions, mixed configs in a group, unequal samples, runs
/// without epochs, failed runs (left out, the gap shown), runs that never reached the target.
struct ScalingReport {
    QString sweep;
    int warmupEpochs = 1;  ///< as used (ReportOptions::warmupEpochs resolved)
    /// "itwinai" when every run was imported from itwinai (manifest report_definition): epochs are
    /// averaged as its report does (all of them, unless --warmup says otherwise), and report.md says
    /// where ScaleDesk's view differs. Empty for ScaleDesk's own runs or a mix.
    QString definition;
    bool includesValidation = false;  ///< epoch time is wall_s (training + validation) rather than train_s
    QString scalingLaunched;          ///< "weak" or "strong" as the sweep was launched (its runs' records), or empty
    QString scalingMeasured;          ///< "weak" (global batch per step ∝ ranks), "strong" (fixed), "mixed", or empty (one size)
    double target;                    ///< validation loss; default: the largest of the runs' best losses (every run reached it)
    QString targetSource;             ///< how the target was chosen: "given", or the default's rule
    bool targetGiven = false;         ///< --target-loss (or the window's) set it
    QList<ReportRunRow> runs;
    QList<ReportGroupRow> groups;  ///< by strategy, then world size
    /// The gradient noise scale the trainer measured over the runs' epochs, as (validation loss,
    /// B_simple) (learningcurve.h gradientNoiseByLoss), and the runs' global batches, ascending.
    QList<QPair<double, double>> noiseByLoss;
    QList<double> globalBatches;
    QStringList warnings;
    ScalingReport();

    QString runsCsv() const;
    QString groupsCsv() const;
    QString markdown() const;
};

ScalingReport buildScalingReport(const QString& sweep, const QList<ReportRun>& runs, const ReportOptions& options = {});

}  // namespace scaledesk
