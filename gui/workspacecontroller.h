#pragma once

#include "runs/clustersession.h"
#include "launchdialog.h"
#include "runs/mirrorreader.h"
#include "prompter.h"
#include "runs/runstore.h"

#include <QObject>
#include <QSet>
#include <QTimer>

#include <map>
#include <memory>

namespace scaledesk::gui {

/// The workspace behind the window: the run index, one ClusterSession per profile (its transport
/// on its own thread), and the live poll of active runs on the adaptive schedule. Views get plain
/// data by signal; nothing here blocks the GUI thread on the network.
class WorkspaceController : public QObject {
    Q_OBJECT
public:
    explicit WorkspaceController(const QString& workspaceRoot, QObject* parent = nullptr);
    ~WorkspaceController() override;
    bool isOpen() const { return m_store != nullptr; }
    QString openError() const { return m_openError; }
    const RunStore* store() const { return m_store.get(); }
    const Prompter& prompter() const { return *m_prompter; }
    const Workspace& workspace() const { return m_workspace; }

    /// The reader of a run's mirror (created on first use; kept while the window lives).
    MirrorReader& reader(const QString& runId);
    bool hasReader(const QString& runId) const { return m_readers.count(runId) > 0; }
    /// Creates a run's reader and parses what its mirror already holds on a pool thread (a big
    /// backlog must not freeze the window); readerReady(runId) follows.
    void loadReader(const QString& runId);
    /// Reads the run index again and announces it.
    void refresh();
    void pollNow();
    void cancel(const QString& runId, const QString& signal = QString());
    void requeue(const QString& runId);
    /// Submits every point of a launch on the profile's session; progress and errors come back as
    /// messages, the new runs through runsChanged().
    void launch(const LaunchDialog::Request& request);
    /// The live poll's intervals: while runs write, and the longest wait while idle.
    void setPollIntervals(int activeMs, int maxIdleMs) { m_schedule = PollSchedule(activeMs, maxIdleMs); }

signals:
    void runsChanged(const QList<scaledesk::RunSummary>& runs);
    /// New bytes were mirrored for these runs (their readers have new lines to read).
    void runsUpdated(const QStringList& runIds);
    void message(const QString& text);
    void readerReady(const QString& runId);
    /// A profile's connection: `ok` after a poll that worked, else the reason it did not.
    void profileState(const QString& profile, bool ok, const QString& text);

private:
    ClusterSession* session(const QString& profile, QString* error);
    ClusterSession* sessionForRun(const QString& runId, JobRef* ref);
    void scheduleNext(bool grew);
    Workspace m_workspace;
    std::unique_ptr<RunStore> m_store;
    QString m_openError;
    Prompter* m_prompter;  // a child: outlives the sessions, which ~WorkspaceController deletes
    std::map<QString, ClusterSession*> m_sessions;
    std::map<QString, std::unique_ptr<MirrorReader>> m_readers;
    QSet<QString> m_loading;
    QTimer m_timer;
    PollSchedule m_schedule{1000, 30000};
    int m_inFlight = 0;
    bool m_grew = false;
};

}  // namespace scaledesk::gui
