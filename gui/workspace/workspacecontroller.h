#pragma once

#include "runs/clusterprobe.h"
#include "runs/demo.h"
#include "runs/runactions.h"
#include "workspace/profileloops.h"
#include "workspace/workspacereads.h"

#include <QHash>
#include <QObject>
#include <QSet>
#include <QTimer>

#include <functional>
#include <map>
#include <memory>
#include <optional>

namespace scaledesk::gui {

/// The workspace behind the window. It holds what the views show (the run list, each shown run's
/// record and manifest, each shown run's parsed mirror) and does all the work off the GUI thread:
/// - every remote action and every poll runs on its profile's ClusterSession thread, through the
///   backend's lifecycle layer (RunActions) and poller, so a run record is only ever written there
///   (and under its lock);
/// - reads that grow with the workspace or a file (the run index, a run's first read, reports, the
///   latest run of a config) run on a pool thread;
/// - each profile with active runs has its own poll loop (ProfileLoops): a next poll is always
///   scheduled, one poll is in flight at a time, and a stuck one is abandoned (with a fresh session
///   after it);
/// - the pool-thread reads are workspacereads.h's functions.
/// Results come back by signal as typed values.
class WorkspaceController : public QObject {
    Q_OBJECT
public:
    explicit WorkspaceController(const QString& workspaceRoot, QObject* parent = nullptr);
    ~WorkspaceController() override;
    const Prompter& prompter() const { return *m_prompter; }
    Prompter& prompter() { return *m_prompter; }
    const Workspace& workspace() const { return m_workspace; }
    /// The error of the last index read, or empty.
    QString openError() const { return m_openError; }

    /// The runs as last read (the index, then every poll and action); empty until the first read.
    const QList<RunSummary>& runs() const { return m_runs; }
    /// A run's record and manifest as last read; null until loadRun() or a poll or action brings it.
    const RunSnapshot* snapshot(const QString& runId) const;
    /// Whether `action` applies to the run as last read (the lifecycle layer's rule).
    ActionCheck check(RunAction action, const QString& runId) const;

    /// The reader of a run's mirror; only valid once hasReader() (after readerReady()).
    MirrorReader& reader(const QString& runId);
    bool hasReader(const QString& runId) const { return m_readers.count(runId) > 0; }
    /// Parses what a run's mirror holds and reads its record, on a pool thread; readerReady(runId) follows.
    void loadRun(const QString& runId);

    /// Reads the run index again (pool thread); runsChanged() follows.
    void refresh();
    /// Polls every profile with active runs now, then fast for a while.
    void pollNow();
    void cancel(const QString& runId);
    void checkpointStop(const QString& runId);
    /// `confirmed`: the user answered the question check() asked (requeue of a completed run).
    void requeue(const QString& runId, bool confirmed = false);
    /// Submits every point on the profile's session, following request.onFailure.
    void launch(const LaunchRequest& request);
    /// The live poll's intervals: while runs write, and the longest wait while idle.
    void setPollIntervals(int activeMs, int maxIdleMs);

    /// The scaling report of a sweep (pool thread); reportReady() follows.
    void loadReport(const QString& sweep, const scaledesk::ReportOptions& options = {});
    /// scaledesk plan's prediction for a sweep at its own node counts, from its runs and its
    /// profile's calibrations (pool thread); planReady() follows.
    void loadPlan(const QString& sweep);
    /// The newest run launched from a config and that run's resolved config (pool thread);
    /// latestRunFound() follows.
    void findLatestRun(const QString& configFile, const QString& configName);

    /// Runs the demo sweep on this machine (runDemo's DemoSweep), one run at a time: each is launched
    /// when the one before it has ended; runs that exist are kept. demoFinished() follows; progress
    /// goes out as the task "demo".
    void runDemo();
    /// Imports runs made elsewhere (the backend's importRuns, as `scaledesk import`) on a worker
    /// thread, with progress as the task "import"; importFinished() follows, then the run list.
    void importRuns(const QStringList& paths, const scaledesk::ImportOptions& options);
    bool demoRunning() const { return m_demo.has_value(); }
    /// Deploys the trainer to a profile (deployTrainer, as `scaledesk deploy` does) on its session;
    /// deployFinished() follows, progress goes out as the task "deploy:<profile>".
    void deploy(const QString& profile);
    /// A check as the window shows it: "✔ what: detail" or "✘ what: detail".
    static QString checkLine(const ProfileCheck& check);
    /// Runs `scaledesk profiles test`'s checks (testProfile) on the profile's session; profileTested() follows.
    void testProfile(const QString& profile);
    /// Runs deployTrainer(profile, deployOptionsFor(profile)) on `session`, with its progress and
    /// Cancel; succeeded() carries DeployResult::summary(). The window's deploy and the wizard's.
    static RemoteOperation* startDeploy(ClusterSession& session, const ClusterProfile& profile);
    /// Closes a profile's session (its file changed): the next operation connects with the new file.
    void forgetProfile(const QString& profile);
    /// Stops a task that taskProgress() announced: a launch stops before its next point, the demo
    /// cancels its running run and launches no more, a deploy kills its build, a first read of a
    /// run stops (what was read stays), a report is dropped.
    void cancelTask(const QString& task);

    ProfileStatus profileStatus(const QString& profile) const;
    /// Tests: wraps the transport of every session made from now on (to inject faults).
    using TransportWrapper = ProfileLoops::TransportWrapper;
    void setTransportWrapper(TransportWrapper wrapper) { m_loops->setTransportWrapper(std::move(wrapper)); }
    /// Tests: the poll timing (fast window, intervals, timeout) of every profile, exactly as given
    /// (setPollIntervals and the defaults go through PollSettings::forProfile).
    void setPollSettings(const PollScheduler::Settings& settings);

signals:
    void runsChanged(const QList<scaledesk::RunSummary>& runs);
    /// These runs have new mirrored bytes or a new record.
    void runsUpdated(const QStringList& runIds);
    void message(const QString& text);
    void readerReady(const QString& runId);
    /// A profile's connection after each poll: `ok`, or the reason it failed.
    void profileState(const QString& profile, bool ok, const QString& text);
    /// An action ended: done (`ok`, with what the run says now) or refused/failed (with why).
    void actionFinished(const QString& runId, scaledesk::RunAction action, bool ok, const QString& text);
    /// A launch ended; `summary` says what was submitted and what failed.
    void launchFinished(bool ok, const QString& summary);
    void reportReady(const QString& sweep, const scaledesk::ScalingReport& report);
    /// The plan of loadPlan(), or (`error` not empty) why there is none.
    void planReady(const QString& sweep, const scaledesk::Plan& plan, const QString& error);
    /// Long work: what it does and how far it is (`total` 0: not known). Every task ends with taskEnded().
    void taskProgress(const QString& task, const QString& text, qint64 done, qint64 total);
    void taskEnded(const QString& task);
    void demoFinished(bool ok, const QString& text);
    /// An import ended: the runs it added (empty on failure), the sweep the first of them is in
    /// (empty when none), and what to tell the user.
    void importFinished(bool ok, const QString& text, const QStringList& runIds, const QString& sweep);
    /// The demo launched its next run.
    void demoRunLaunched(const QString& runId);
    /// Each check as "✔ what: detail" or "✘ …".
    void profileTested(const QString& profile, bool ok, const QStringList& lines);
    void deployFinished(const QString& profile, bool ok, const QString& text);
    void latestRunFound(const QString& configFile, const QString& configName, const scaledesk::gui::ConfigBaseline& baseline);

private:
    void tick();
    void schedule();
    /// Reads these runs' records again (another process changed them) and shows them.
    void reloadSnapshots(const QStringList& runIds);
    void applyPollSettings(const PollScheduler::Settings& settings, bool exact);
    void takeSnapshots(const QList<RunSnapshot>& runs);
    void act(const QString& runId, RunAction action, bool confirmed);
    RemoteOperation* startLaunch(const LaunchRequest& request);
    void advanceDemo();
    void endDemo(bool ok, const QString& text);
    void startTask(const QString& task, const QString& text, std::function<void()> cancel);
    void endTask(const QString& task);
    QStringList activeProfiles() const;

    Workspace m_workspace;
    QString m_openError;
    Prompter* m_prompter;  // a child: outlives the sessions, which ~WorkspaceController deletes
    std::unique_ptr<ProfileLoops> m_loops;
    QList<RunSummary> m_runs;
    QHash<QString, RunSnapshot> m_snapshots;
    std::map<QString, std::unique_ptr<MirrorReader>> m_readers;
    QSet<QString> m_loading;
    QTimer m_timer;
    qint64 m_nextIndexRead = 0;  ///< on m_loops' clock
    int m_indexGeneration = 0;
    QHash<QString, std::function<void()>> m_tasks;  ///< running tasks and how each is cancelled
    int m_launches = 0;
    int m_reports = 0;
    struct Demo {
        DemoSweep sweep;
        QString current;  ///< the run launched last; the next one waits for it to end
        bool cancelled = false;
    };
    std::optional<Demo> m_demo;
};

}  // namespace scaledesk::gui

Q_DECLARE_METATYPE(scaledesk::LaunchResult)
Q_DECLARE_METATYPE(scaledesk::RunAction)
