#pragma once

#include "core/expected.h"
#include "core/status.h"
#include "runs/runrecord.h"

#include <QString>
#include <QStringList>

#include <functional>
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
    /// A path inside the workspace relative to it (others unchanged), and back: run records keep
    /// workspace paths relative, so a workspace can be copied or moved.
    QString relative(const QString& path) const;
    QString absolute(const QString& path) const;
    /// True when a run with this id is recorded (its run.json exists).
    bool hasRun(const QString& runId) const;
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
    QString origin;   ///< an imported run's source folder (RunRecord::originPath); empty otherwise
    QString message;  ///< the latest reason (RunRecord::message): "local: PENDING (waiting for 2 of 2 slots (cores))"

    static RunSummary of(const RunRecord& record);
};

class RunLock;

/// Run records of a workspace. run.json files are the truth (written atomically); the SQLite index
/// is rebuilt from them when it is missing, unreadable, corrupt or of another schema, and a row
/// that could not be written is copied from run.json again by the next list().
/// One RunStore per thread (it owns a Qt SQL connection); any number of stores, in any number of
/// threads and processes, may share a workspace: a record changes only through create() and
/// update(), which hold the run's lock (a mutex in this process and a lock file for others), so no
/// change is ever lost to a concurrent one.
class RunStore {
public:
    static Expected<std::unique_ptr<RunStore>> open(const Workspace& workspace);
    /// This thread's store of `workspace`, opened on first use and closed when the thread ends:
    /// for worker threads (a ClusterSession's), which may not use another thread's SQL connection.
    /// Only for threads that end before the application does (not QThreadPool's): the store must
    /// close while Qt SQL still exists.
    static Expected<RunStore*> forThisThread(const Workspace& workspace);
    ~RunStore();
    RunStore(const RunStore&) = delete;
    RunStore& operator=(const RunStore&) = delete;

    const Workspace& workspace() const { return m_workspace; }

    /// Records a new run; refuses an id that exists (ErrorCode::RunExists).
    Status create(const RunRecord& record);
    /// Reads the run's record, applies `change` and writes it back, all under the run's lock. A
    /// `change` that returns an error writes nothing and passes the error on. Returns what was written.
    /// `held`: the caller already holds the run's lock (the poller, which mirrors files under it).
    Expected<RunRecord> update(const QString& runId, const std::function<Status(RunRecord&)>& change, const RunLock* held = nullptr);
    /// Writes runs/<id>/run.json atomically, then the index row, replacing whatever is there
    /// (tests and imports; live code uses create() and update()).
    Status save(const RunRecord& record);
    Expected<RunRecord> load(const QString& runId) const;
    bool exists(const QString& runId) const;
    /// The newest run launched from `configFile` (absolute) with the named config; empty when none.
    QString latestRunOf(const QString& configFile, const QString& configName) const;

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
    /// Writes run.json; the index row only when its columns differ from `before`'s (a poll that
    /// moved only offsets writes no index row).
    /// Synced: written with fsync (QSaveFile), for every change people see; Renamed: a new file
    /// renamed over the old one without fsync, for the mirror's bookkeeping alone (offsets, mtimes).
    enum class Durability { Synced, Renamed };
    Status write(const RunRecord& record, const RunRecord* before = nullptr, Durability durability = Durability::Synced);
    Status openIndex();
    bool indexUsable(QString* why);
    Status upsert(const RunRecord& r) const;
    /// A row that could not be written (the index busy past its timeout, a full disk) while its
    /// run.json was: its id goes to `index.sqlite.stale`, and list() copies those rows from
    /// run.json again before it reads, so no run drops out of the lists and the poll.
    QString stalePath() const;
    Status markStale(const QString& runId) const;
    void repairStaleRows() const;

    Workspace m_workspace;
    QString m_connection;
    QString m_rebuildReason;
    QStringList m_warnings;
};

/// Holds one run's lock: other threads of this process and other processes wait (a QLockFile in the
/// run's folder; a lock left by a process that died is taken over). Taken by RunStore::update() and
/// by whoever must change a run's mirrored files and its record as one step (the poller).
class RunLock {
public:
    RunLock(const Workspace& workspace, const QString& runId);
    ~RunLock();
    RunLock(const RunLock&) = delete;
    RunLock& operator=(const RunLock&) = delete;
    /// False when the lock file could not be taken (an unwritable folder); the caller reports it.
    bool isLocked() const { return m_locked; }

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
    bool m_locked = false;
};

}  // namespace scaledesk
