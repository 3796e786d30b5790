#pragma once

#include "core/expected.h"
#include "core/progress.h"
#include "runs/runstore.h"

#include <QDateTime>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

namespace scaledesk {

/// What the NERSC Python trainer's out.log says: its configuration block and, per epoch, the
/// training time and throughput, the mean losses and the validation time.
struct NerscLog {
    struct Epoch {
        int epoch = 0;
        double trainS, samplesPerS, trainLoss, valLoss, valS;
        QDateTime trainEnd, end;  ///< the times of the "Time taken" line and of the epoch's last line (no zone: see importRuns)
        Epoch();
    };
    QMap<QString, QString> config;  ///< "global_batch_size" → "64", …, and "Configuration name" → "base"
    QList<Epoch> epochs;
    QDateTime start;          ///< the first line's time
    QStringList warnings;     ///< file:line: a line that looked like an epoch line and did not read
    bool recognised = false;  ///< the file has the NERSC trainer's configuration block or epoch lines
};
NerscLog parseNerscLog(const QByteArray& bytes, const QString& fileName);

struct ImportOptions {
    QString sweep;        ///< put every imported run in this sweep (the report reads sweeps); empty: none
    QString id;           ///< the run id, when exactly one run is found; empty: from the folder names (a ScaleDesk run folder's own name)
    int ranks = 0;        ///< a NERSC or TensorBoard run's world size, which their files do not record; 0: 1
    int gpusPerNode = 4;  ///< itwinai runs whose files give nodes but not GPUs (or GPUs but not nodes); itwinai assumed 4
};

/// One run as it was imported.
struct ImportedRun {
    QString id;
    QString kind;    ///< "nersc-python", "tensorboard", "scaledesk" or "itwinai"
    QString source;  ///< the folder, absolute
    QString sweep;   ///< the sweep it was put in (itwinai runs always get one: --sweep, else "itwinai")
    int scalars = 0, epochs = 0;
    QStringList tags;      ///< the TensorBoard tags read
    QStringList warnings;  ///< file (offset or line): what could not be read and was skipped
};

/// Adds runs made elsewhere to the workspace, as read-only runs (RunRecord::originKind):
/// - a ScaleDesk run folder (manifest.json and metrics.jsonl): its files, as they are;
/// - a NERSC Python run folder: out.log (config block, per-epoch times and losses) and the event
///   files under logs/;
/// - any TensorBoard log folder: each folder under the path that holds event files is one run, as
///   `tensorboard --logdir` counts them; every scalar of every tag;
/// - an itwinai scalability folder in any of its three layouts (itwinaiimport.h): a run per
///   strategy, world size and repetition, in a sweep (the option's, else "itwinai"), with itwinai's
///   strategy names, its energy, utilisation and computation share in the manifest and
///   `report_definition: itwinai`, which makes the report average every epoch as itwinai does.
/// Event-file scalars become `scalar` records of the run's metrics.jsonl, with their tags and wall
/// times; the NERSC log's epochs become `epoch` records and an epochs.csv, so the comparison and the
/// scaling report read an imported run like any other. The source files are copied into the run's
/// folder, so `tensorboard --logdir` works on it too.
/// Everything is checked before anything is written: a missing path, a path without runs, an id
/// that exists or repeats refuse the whole import. Each run is written into a hidden folder and
/// renamed into place, then recorded; a failure leaves no half-written run.
Expected<QList<ImportedRun>> importRuns(RunStore& store, const QStringList& paths, const ImportOptions& options = {},
                                        const ProgressFn& progress = {});

}  // namespace scaledesk
