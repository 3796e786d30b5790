#pragma once

#include "core/expected.h"
#include "runs/runrecord.h"
#include "remote/transport.h"

#include <QString>
#include <QStringList>

#include <memory>

namespace scaledesk {

/// The folder where the app keeps everything: `profiles/*.yaml`, `runs/<run id>/` (run.json and
/// the local mirror of the run's files) and `index.sqlite`. Default: $SCALEDESK_HOME, else
/// <XDG data home>/scaledesk.
class Workspace {
public:
    explicit Workspace(QString root);
    static QString defaultRoot();

    QString root() const { return m_root; }
    QString profilesDir() const;
    QString runsDir() const;
    QString runDir(const QString& runId) const;
    QString indexPath() const;
    /// Creates the folders; an error names the folder that could not be made.
    Status ensure() const;

private:
    QString m_root;
};

/// A short row of the run index: what lists and filters need without reading run.json.
struct RunSummary {
    QString id;
    QString sweep;
    QString profile;
    QString strategy;
    int nodes = 1;
    int ranksPerNode = 1;
    RunState state = RunState::Draft;
    QString jobId;
    QString created;  ///< ISO UTC
    QString updated;
};

/// Run records of a workspace. run.json files are the truth (written atomically); the SQLite index
/// is rebuilt from them when it is missing, unreadable, corrupt or of another schema.
/// One RunStore per thread (it owns a Qt SQL connection).
class RunStore {
public:
    static Expected<std::unique_ptr<RunStore>> open(const Workspace& workspace);
    ~RunStore();
    RunStore(const RunStore&) = delete;
    RunStore& operator=(const RunStore&) = delete;

    const Workspace& workspace() const { return m_workspace; }

    /// Writes runs/<id>/run.json atomically, then the index row.
    Status save(const RunRecord& record);
    Expected<RunRecord> load(const QString& runId) const;
    bool exists(const QString& runId) const;

    /// Index rows, oldest first; `sweep` filters when not empty.
    QList<RunSummary> list(const QString& sweep = QString()) const;
    QStringList activeRunIds() const;

    /// Drops the index and reads every run.json again; returns how many runs it indexed.
    Expected<int> rebuildIndex();
    /// True when open() had to rebuild the index (and why, in rebuildReason()).
    bool wasRebuilt() const { return !m_rebuildReason.isEmpty(); }
    QString rebuildReason() const { return m_rebuildReason; }
    /// run.json files that could not be read during the last rebuild, with the reason.
    QStringList warnings() const { return m_warnings; }

    /// A run id is a folder name and a job name: not empty, at most 200 characters, no '/', no
    /// control characters, not "." or "..". Anything else (spaces, quotes, $(...), ;, unicode) is
    /// allowed and always quoted.
    static bool validRunId(const QString& id, QString* why);

private:
    explicit RunStore(Workspace workspace);
    Status openIndex();
    bool indexUsable(QString* why);
    Status upsert(const RunRecord& r);

    Workspace m_workspace;
    QString m_connection;
    QString m_rebuildReason;
    QStringList m_warnings;
};

}  // namespace scaledesk
