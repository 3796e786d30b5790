#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>

namespace scaledesk {

/// Where a run is in its life. Draft → Submitting → Queued → Running → one of the final states;
/// Requeued is the preempted-and-requeued state between two Running spells.
enum class RunState {
    Draft,
    Submitting,
    Queued,
    Running,
    Requeued,
    Completed,
    Failed,
    Cancelled,
    Timeout,
    SubmitFailed,  ///< never reached the scheduler; the message says why
    Lost,          ///< the scheduler forgot the job and the run left no final status
};

QString runStateName(RunState state);  ///< "queued", "submit-failed", …
bool runStateFromName(const QString& name, RunState* state);
bool isFinal(RunState state);   ///< nothing will change it without a user action
bool isActive(RunState state);  ///< the poller follows it (queued, running, requeued, submitting)

/// One state change as it was recorded.
struct RunTransition {
    RunState state = RunState::Draft;
    QDateTime when;  ///< UTC
    QString note;    ///< e.g. "sbatch: job 42", "squeue: PENDING (BeginTime)"
};

/// A run as the app knows it. The source of truth is `runs/<id>/run.json` in the workspace
/// (written atomically); the SQLite index is a cache of these files.
struct RunRecord {
    QString id;
    QString sweep;  ///< empty for a single run
    QString profile;
    QString configFile;  ///< the local YAML it was launched from
    QString configName;
    QString strategy = QStringLiteral("ddp");
    int nodes = 1;
    int ranksPerNode = 1;
    int repetition = 1;
    int localBatch = 0;
    QString scaling;     ///< the sweep's scaling type: "weak", "strong", or empty for a single run
    QString task;        ///< empty: a training run; "bench-comm": a calibration job (RunPoint::task)
    QString remoteDir;   ///< the run folder on the cluster (absolute)
    QString jobId;       ///< empty until the scheduler accepted it
    QString submitStep;  ///< the last step of a submit that was started: "upload", "sbatch", "recorded"
    RunState state = RunState::Draft;
    QString message;  ///< the latest reason or error, for people
    QList<RunTransition> history;
    QMap<QString, qint64> offsets;  ///< mirrored file → bytes already copied
    QMap<QString, qint64> mtimes;   ///< whole-file mirrors (manifest.json) → mtime copied
    /// Where an imported run came from (`scaledesk import`): what it was ("nersc-python",
    /// "tensorboard" or "scaledesk") and the folder, absolute. Empty for a run ScaleDesk launched.
    /// An imported run is read-only: finished, with no job, and no action applies to it.
    QString originKind, originPath;
    bool imported() const { return !originKind.isEmpty(); }

    /// Appends a transition (only when the state or the note changes) and sets state/message.
    void transition(RunState to, const QString& note = QString());
    QDateTime created() const;

    QJsonObject toJson() const;
    static bool fromJson(const QJsonObject& json, RunRecord* record, QString* error);
};

/// The trainer's manifest.json in a run folder (or its mirror); empty when missing or unreadable.
QJsonObject readRunManifest(const QString& runDir);

}  // namespace scaledesk
