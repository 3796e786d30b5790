#pragma once

#include "config/metricsources.h"
#include "core/status.h"

#include <QString>
#include <QStringList>

namespace scaledesk {

/// Makes a command run's metrics.jsonl and epochs.csv in its mirror from the sources its
/// definition names (config/metricsources.h), as the poller brings their bytes: the job's output
/// (`outputs`, file names in the mirror: job.out, slurm-<id>.out) through the NERSC lines and the
/// patterns, and the event files mirrored under `sources.tensorboard`. Each call reads only what
/// is new since the last (offsets kept in the mirror's .derived.json, so another process or a
/// restart goes on from there) and appends records in the formats scaledesk_metrics writes, so the
/// live view, compare, the report and the planner read them as any run's:
/// - a pattern with `step`: a step record of its other groups; with `epoch`: an epoch record;
/// - an event file's scalars: a `scalar` record per value (its tag, as an import gives it); a tag
///   named in `tags` also as that step field, or that epoch field (its step is the epoch);
/// - a NERSC epoch ("Time taken for epoch N is … sec, avg … samples/sec", the losses, the
///   validation time): an epoch record once its validation time is there, a later epoch started,
///   or the run `ended`.
/// A partial last line, or an event record still being written, waits for the next call.
Status deriveMetrics(const QString& mirrorDir, const MetricSources& sources, const QStringList& outputs, bool ended);

}  // namespace scaledesk
