#pragma once

#include "cli/cli.h"
#include "config/profiles.h"
#include "runs/runactions.h"
#include "runs/runstore.h"

#include <QMap>

#include <map>
#include <memory>

namespace scaledesk {
struct ScalingReport;
}

namespace scaledesk::cli {

/// A profile's transport and scheduler for one command, with the SSH questions asked on the
/// terminal. Passphrases typed for a profile with remember_secrets go to the keyring once the
/// connection has worked (rememberSecrets()), so a mistyped one is never kept.
struct Connection {
    std::unique_ptr<Transport> transport;
    std::unique_ptr<Scheduler> scheduler;
    std::shared_ptr<QMap<QString, QString>> entered = std::make_shared<QMap<QString, QString>>();
    void rememberSecrets();
};

/// What every command gets: the workspace and its store, the connection flags, the renderers,
/// and one connection per profile for the whole command.
class Context {
public:
    Context(const Workspace& workspace, RunStore& store, const CliHooks& hooks) : ws(workspace), store(store), hooks(hooks) {}
    const Workspace ws;
    RunStore& store;
    const CliHooks& hooks;
    bool acceptNewHostKey = false;  ///< --accept-new-host-key

    /// A new connection to `profile` (the SSH login happens on its first use).
    Connection connect(const ClusterProfile& profile) const;
    /// The command's connection to the named profile, made on first use.
    Expected<Connection*> connection(const QString& profileName);

    /// Polls every active run among `ids` (all active runs when empty), one connection per
    /// profile; problems are reported per profile and leave the records as they were. `verbose`
    /// prints each state change. False when a profile could not be polled.
    bool pollRuns(const QStringList& ids, bool verbose);
    /// Polls until none of `ids` is active (or `timeoutS` > 0 passes: false).
    bool waitForRuns(const QStringList& ids, int timeoutS, double intervalS);
    /// Launches `req` through the lifecycle layer (RunActions::launch) on the profile's connection,
    /// printing progress and each point that failed or was left out; with `wait`, polls until the
    /// submitted runs end (`timeoutS` > 0: at most that long). The ids submitted go to `submitted`.
    /// Returns the exit code: 0 when every point was submitted (and, with `wait`, completed).
    int launchRuns(const LaunchRequest& req, bool wait, int timeoutS, QStringList* submitted = nullptr);

private:
    std::map<QString, Connection> m_connections;
};

/// The runs as a table (state, job, profile, message), with every state change when `history`.
void printRuns(const QList<RunRecord>& runs, bool history);
/// `text` into `path` atomically.
Status writeText(const QString& path, const QString& text);
/// The report in each of `formats` (csv, md, png, svg, pdf) into `dir`, printing each path.
Status writeReport(const ScalingReport& report, const QString& dir, const QStringList& formats, const CliHooks& hooks);

}  // namespace scaledesk::cli
