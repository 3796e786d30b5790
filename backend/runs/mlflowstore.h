#pragma once

#include "core/expected.h"

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

namespace scaledesk::mlflow {

/// One line of a metric's history: `timestamp value step` (milliseconds since the epoch).
struct MetricPoint {
    qint64 timestampMs = 0;
    double value = 0;
    qint64 step = 0;
};

/// One run of an MLflow file store (`<experiment>/<run id>/`).
struct Run {
    QString id, name, dir;
    QString parentId;  ///< the tag mlflow.parentRunId; empty for a top-level run
    int status = 0;    ///< meta.yaml's status: 1 running, 2 scheduled, 3 finished, 4 failed, 5 killed
    qint64 startMs = 0, endMs = 0;
    QMap<QString, QString> params, tags;
    QMap<QString, QList<MetricPoint>> metrics;  ///< by key; a key with '/' is a path under metrics/
};

/// One experiment folder: its name (meta.yaml) and its live runs (deleted ones left out).
struct Experiment {
    QString id, name, dir;
    QList<Run> runs;
    QStringList warnings;  ///< file:line: what could not be read and was skipped
};

/// A folder that is an experiment of a file store: a meta.yaml with `experiment_id` and no `run_id`.
bool isExperimentDir(const QString& dir);

/// Reads an experiment folder as MLflow 1.x and 2.x write the file store: meta.yaml (yaml-cpp),
/// params/<key> and tags/<key> (the file's text), metrics/<key> (a line per value: `timestamp
/// value step`; a line of two fields, as MLflow before 1.0 wrote, is step 0). An unreadable
/// meta.yaml is an error naming the file; a bad metric line is a warning naming file:line.
Expected<Experiment> readExperiment(const QString& dir);

}  // namespace scaledesk::mlflow
