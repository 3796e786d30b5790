#pragma once

#include "core/expected.h"
#include "core/status.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace scaledesk {

class RunStore;

/// A scaling study: nodes × ranks per node × strategies × repetitions of one trainer config.
struct SweepSpec {
    enum class Scaling { Weak, Strong };
    QString name;
    QList<int> nodes{1};
    QList<int> ranksPerNode{1};
    QStringList strategies{QStringLiteral("ddp")};
    int repetitions = 1;
    Scaling scaling = Scaling::Weak;
    int localBatch = 0;   ///< weak scaling: per-rank batch (global = ranks × local, the NERSC rule); 0 = the config's
    int globalBatch = 0;  ///< strong scaling: fixed global batch, split over the ranks
    /// A command run's variants (CommandRun::variants): `strategies` picks among these instead of
    /// the trainer's, and the points get task "command".
    QStringList variants;
};

/// One job of a sweep.
struct RunPoint {
    QString runId;  ///< <sweep>-<strategy>-<nodes>x<ranks>-r<k>
    QString sweep;
    QString strategy;
    int nodes = 1;
    int ranksPerNode = 1;
    int repetition = 1;
    int localBatch = 0;  ///< passed as --local_batch_size when > 0
    QString scaling;     ///< "weak" or "strong" (a sweep's), empty for a single run
    /// What the job runs: empty for training; "bench-comm" for the communication benchmark of
    /// `scaledesk calibrate` (scaledesk-train bench-comm, writing comm.jsonl in the run folder);
    /// "command" for a run of the user's own code (SubmitOptions::command).
    QString task;
    int worldSize() const { return nodes * ranksPerNode; }
};

/// The counts of a sweep: at least one node count and one ranks-per-node count, each positive, and
/// at least one repetition. Errors name the field.
Status checkSweepCounts(const SweepSpec& spec);

/// Expands a sweep in a stable order (strategy, then nodes, then ranks per node, then
/// repetition). Errors name the field: an empty list, a non-positive count, an unknown strategy,
/// a name that is not a safe identifier, or a strong-scaling batch that does not divide.
Expected<QList<RunPoint>> expandSweep(const SweepSpec& spec);

/// Weak scaling with no per-rank batch given: the per-rank batch of the sweep's smallest point,
/// from the config's `global_batch_size` (the NERSC rule: the smallest run trains with the config's
/// global batch, and every added rank adds that many samples per step), so the global batch grows
/// with the ranks. Without it the trainer would split one global batch over the ranks, which is
/// strong scaling under a weak label. Leaves strong sweeps and a given per-rank batch alone. An
/// error names the config and key when the batch is missing or does not divide.
/// `sweepLocalBatch` (weakSweepLocalBatch) is the per-rank batch of the sweep's runs so far: a
/// sweep launched in parts goes on at it, so a second submit of larger points stays weak scaling.
Status fillWeakLocalBatch(SweepSpec& spec, const QString& configFile, const QString& configName, int sweepLocalBatch = 0);

/// The per-rank batch of the weak-scaling runs already recorded in sweep `name` (its first run's),
/// or 0 when it has none.
int weakSweepLocalBatch(const RunStore& store, const QString& name);

}  // namespace scaledesk
