#pragma once

#include "core/expected.h"

#include <QList>
#include <QMap>
#include <QRegularExpression>
#include <QString>

namespace YAML {
class Node;
}

namespace scaledesk {

/// Where a command run's metrics come from when its code does not write them through
/// scaledesk_metrics: a run definition's `metrics` (docs/own-code.md):
///
///     metrics:
///       tensorboard: logs            # event files under the run folder's logs/, followed live
///       tags:                        # a tag as a step field, or as an epoch's (epoch.<field>)
///         loss: Loss/train
///         epoch.train_time: time/epoch
///       nersc: true                  # the NERSC trainer's epoch lines in the job's output
///       patterns:                    # per line of the job's output; named groups
///         - 'step (?<step>\d+) loss=(?<loss>\S+)'
///
/// With any of them, the run's metrics.jsonl and epochs.csv in the workspace are made from these
/// sources as they arrive (runs/derivedmetrics.h); the files the module would write on the cluster
/// are not read.
struct MetricSources {
    /// A pattern over one line of output: with a group `step`, a step record of its other groups;
    /// with `epoch`, an epoch record (fields epochFields()).
    struct Pattern {
        QRegularExpression re;
        bool epoch = false;
    };
    QString tensorboard;          ///< a folder in the run folder ('/'-separated, no '..'), or empty
    QMap<QString, QString> tags;  ///< ScaleDesk name ("loss", "epoch.train_time") -> TensorBoard tag
    bool nersc = false;
    QList<Pattern> patterns;
    bool isSet() const { return !tensorboard.isEmpty() || nersc || !patterns.isEmpty(); }
};

/// The fields an epoch may have, as scaledesk_metrics.epoch() names them: train_time (the one an
/// epoch needs), samples, train_loss, val_loss, val_time, lr.
QStringList epochFields();

/// Reads `metrics` of a run definition (file: for the errors, which name file:line:column): an
/// unknown key, a folder that leaves the run folder, a pattern that does not compile (with
/// PCRE's message and where), a pattern without a `step` or `epoch` group, an epoch pattern or
/// tag without train_time, are refused.
Expected<MetricSources> parseMetricSources(const QString& file, const YAML::Node& node);

/// `metrics` of a run definition file (for the poller, which has the run's copy, run.yaml): none
/// gives an empty MetricSources.
Expected<MetricSources> loadMetricSources(const QString& file);

}  // namespace scaledesk
