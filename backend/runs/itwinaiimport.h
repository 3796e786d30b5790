#pragma once

#include "core/expected.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <limits>
#include <optional>

namespace scaledesk::itwinai {

/// The three layouts itwinai's scalability tutorial has written (itwinai-scaling.md §3):
/// - Pr262: `scalability-metrics/{epoch-time,gpu-energy-data,communication-data}/`;
/// - Unified: `scalability-metrics/<run_id>/{epoch-time,gpu-energy-data,computation-data}/`;
/// - MLflow: an experiment of an MLflow file store (`mllogs/mlflow/<experiment id>/`), a run per worker.
enum class Layout { Pr262, Unified, MLflow };
QString layoutName(Layout layout);

struct Source {
    Layout layout;
    QString dir;  ///< the folder that holds epoch-time/, or the MLflow experiment folder
};

/// The itwinai source that `dir` itself is: a folder with an epoch-time/ subfolder (Unified when it
/// has computation-data/ or is not named scalability-metrics: a run id's folder; else Pr262), or
/// an MLflow experiment folder (a store's experiments are its subfolders: a walk finds each).
/// Nothing when `dir` is neither.
std::optional<Source> sourceAt(const QString& dir);

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

/// One training run as itwinai recorded it: a strategy at a world size, its epoch times, and what
/// its GPU sampler and profiler wrote about it.
struct Run {
    Layout layout = Layout::Pr262;
    QString strategy;  ///< itwinai's name, as written ("ddp", "horovod", "deepspeed", "ddp-bl", …)
    int world = 0, nodes = 0;
    QString group;       ///< the unified layout's run id, or the MLflow run's name; repetitions share it or not
    QString sourceId;    ///< the MLflow run id of the training run; empty for CSV layouts
    int repetition = 1;  ///< 1, 2, … among the runs of the same strategy and world size (assignRepetitions)
    struct Epoch {
        int epoch = 0;              ///< from 1
        double seconds = kUnknown;  ///< itwinai's epoch time
        double endUnix = kUnknown;  ///< when it was logged (MLflow's timestamp); unknown in the CSV layouts
    };
    QList<Epoch> epochs;
    double energyWh = kUnknown;          ///< Σ power_W × probing_interval_s / 3600 over every sample of every GPU
    double utilPct = kUnknown;           ///< the mean of every utilisation sample, all GPUs and times
    double probingIntervalS = kUnknown;  ///< the sampler's interval (one per run; several: the first, and a warning)
    int gpuSamples = 0;
    double computeFraction = kUnknown;  ///< the profiler's share (below); unknown without profiling data
    QString computeDefinition;          ///< how computeFraction was computed (the layout's formula)
    double startUnix = kUnknown, endUnix = kUnknown;
    QStringList files;     ///< the files read, absolute
    QStringList warnings;  ///< file(:line): what was odd and what was done about it
};

/// Reads one source into runs. `gpusPerNode` sizes a CSV-layout run whose world size no file gives
/// (an epoch-time file says only its node count; itwinai's own plots assumed 4 per node); the MLflow
/// layout derives its nodes from it where the profiling CSVs do not name them. A missing column is
/// an error naming the file and the columns, as itwinai's own readers refuse them.
Expected<QList<Run>> readSource(const Source& source, int gpusPerNode);

/// Numbers the runs of each (strategy, world size) 1, 2, … by group name, then start.
void assignRepetitions(QList<Run>& runs);

}  // namespace scaledesk::itwinai
