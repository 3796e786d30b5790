#pragma once

#include "dialogs/prompter.h"
#include "runs/clustersession.h"
#include "runs/pollscheduler.h"
#include "runs/runstore.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QJsonObject>
#include <QObject>
#include <QPointer>

#include <functional>
#include <map>
#include <memory>

namespace scaledesk::gui {

/// A run as the window shows it: its record and its trainer's manifest, as last read off the GUI thread.
struct RunSnapshot {
    RunRecord record;
    QJsonObject manifest;
};
RunSnapshot snapshotOf(const Workspace& ws, const RunRecord& r);

/// What one poll of a profile brought back (read on the profile's session thread).
struct PollResult {
    QStringList polled;
    QStringList changed;  ///< runs whose state changed
    quint64 bytesNew = 0;
    QStringList problems;
    QList<RunSnapshot> runs;  ///< every polled run after the poll
};

/// A profile's live poll, for the Profiles panel and the tests.
struct ProfileStatus {
    bool polledOk = false;  ///< the last poll worked
    QString lastError;      ///< why the last failed poll failed (kept after a recovery, with its time)
    QDateTime lastErrorAt;
    QDateTime lastOk;  ///< when a poll last worked
    int polls = 0;
    int failures = 0;  ///< failed polls in a row
};

/// The workspace's connections and live polls, one loop per profile: its ClusterSession (made on
/// first use, with host keys, passphrases and 2FA codes asked through the Prompter) and its
/// PollScheduler. A next poll is always scheduled, one poll is in flight at a time, and a stuck
/// one is abandoned, with a fresh session after it. The poll itself runs the backend's RunPoller
/// on the session's thread; its result comes back by polled().
class ProfileLoops : public QObject {
    Q_OBJECT
public:
    using TransportWrapper = std::function<std::unique_ptr<Transport>(std::unique_ptr<Transport>)>;

    ProfileLoops(const Workspace& workspace, Prompter& prompter, QObject* parent = nullptr);
    ~ProfileLoops() override;  ///< each session waits for its running operation

    /// The profile's session, connected on first use; null (and `error` set) when the profile
    /// cannot be read. Actions, launches, deploys and tests run on it too.
    ClusterSession* session(const QString& profile, QString* error);
    /// Milliseconds on the loops' clock (the timer's and the schedules').
    qint64 now() const { return m_clock.elapsed(); }
    /// Abandons stuck polls and starts due ones among `active`, each over the profile's active runs in `runs`.
    void tick(const QStringList& active, const QList<RunSummary>& runs);
    /// When `profile` is next due (now when it has no loop yet).
    qint64 nextAt(const QString& profile) const;
    /// Polls `profile` soon, then fast for a while (an action or a launch changed its runs).
    void kick(const QString& profile);
    ProfileStatus status(const QString& profile) const;
    /// Closes a profile's session (its file changed): the next use connects with the new file.
    void forget(const QString& profile);
    /// `exact`: every profile gets `settings` as given (tests); else PollSettings::forProfile.
    void setSettings(const PollScheduler::Settings& settings, bool exact);
    const PollScheduler::Settings& settings() const { return m_settings; }
    /// Tests: wraps the transport of every session made from now on (to inject faults).
    void setTransportWrapper(TransportWrapper wrapper) { m_wrapTransport = std::move(wrapper); }

signals:
    /// A poll worked: every polled run's record and manifest after it.
    void polled(const scaledesk::gui::PollResult& result);
    /// A profile's connection after each poll: `ok`, or the reason it failed.
    void profileState(const QString& profile, bool ok, const QString& text);
    void message(const QString& text);
    /// A poll started or ended: when the next one is due may have changed.
    void timingChanged();

private:
    struct Loop {
        ClusterSession* session = nullptr;
        PollScheduler schedule;
        QPointer<RemoteOperation> poll;
        ProfileStatus status;
        bool local = false;  ///< the local profile (its own poll intervals)
    };
    Loop* loop(const QString& profile, QString* error);
    void start(const QString& profile, Loop& l, const QStringList& runIds);
    void abandon(const QString& profile, Loop& l);
    void failed(const QString& profile, Loop& l, const QString& why);
    PollScheduler::Settings settingsFor(const Loop& l) const { return m_exact ? m_settings : m_settings.forProfile(l.local); }

    Workspace m_workspace;
    Prompter& m_prompter;
    std::map<QString, Loop> m_loops;
    QElapsedTimer m_clock;
    PollScheduler::Settings m_settings;
    bool m_exact = false;
    TransportWrapper m_wrapTransport;
};

}  // namespace scaledesk::gui

Q_DECLARE_METATYPE(scaledesk::gui::PollResult)
Q_DECLARE_METATYPE(scaledesk::gui::RunSnapshot)
