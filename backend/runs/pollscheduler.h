#pragma once

#include <QtGlobal>

#include <limits>

namespace scaledesk {

/// The intervals of a PollScheduler (see there), in milliseconds.
struct PollSettings {
    qint64 fastMs = 1000;
    qint64 fastWindowMs = 30000;
    qint64 growingMs = 1000;
    qint64 quietAfterMs = 60000;
    qint64 runningMaxMs = 5000;
    qint64 queuedMaxMs = 15000;
    qint64 idleMs = 30000;
    qint64 failedMaxMs = 15000;
    qint64 timeoutMs = 90000;

    /// These settings for a profile: a local profile's poll reads files on this machine (a few
    /// milliseconds), so while runs start and write it polls twice as often (every 500 ms by
    /// default, half of the user's chosen interval otherwise).
    PollSettings forProfile(bool local) const
    {
        PollSettings s = *this;
        if (local) {
            s.fastMs = qMax<qint64>(1, s.fastMs / 2);
            s.growingMs = qMax<qint64>(1, s.growingMs / 2);
        }
        return s;
    }
};

/// When to poll a profile's runs next. It has no timer and no clock of its own: the caller passes
/// the time (milliseconds from any fixed origin), so tests drive it with made-up times and the
/// window and `scaledesk tail` use it with a real clock. The rules:
/// - a launch, an action or a state change makes the next poll due at once, then every `fastMs`
///   for `fastWindowMs` (a run that starts or fails shows within a second);
/// - while the runs' files grow, and while a run runs that wrote (or changed state) within the last
///   `quietAfterMs`: every `growingMs` (a trainer writes a step every few seconds; each one shows
///   within a poll);
/// - otherwise the wait grows by half each time, up to `runningMaxMs` while a run runs and
///   `queuedMaxMs` while runs only wait in the queue; with no active run, `idleMs`;
/// - a failed poll is retried after 2, 4, 8… seconds, at most `failedMaxMs`;
/// - one poll at a time; one that has run (not waited in the connection's queue) for longer than
///   `timeoutMs` is stuck and may be abandoned.
/// A poll is always due at some time: nothing the caller reports can stop the schedule.
class PollScheduler {
public:
    using Settings = PollSettings;
    /// What a finished poll found.
    struct Outcome {
        bool ok = true;        ///< false: the poll failed (its reason is the caller's to show)
        bool grew = false;     ///< a followed file grew
        bool changed = false;  ///< a run changed state
        bool running = false;  ///< a run is running
        bool active = false;   ///< a run is active (queued, running, requeued, submitting)
    };

    explicit PollScheduler(Settings settings = Settings()) : m_s(settings), m_interval(settings.fastMs) {}
    const Settings& settings() const { return m_s; }
    void setSettings(const Settings& s) { m_s = s; }

    /// Something happened (a launch, an action, a click on Refresh): poll now, then fast for a while.
    void kick(qint64 now)
    {
        m_fastUntil = now + m_s.fastWindowMs;
        m_interval = m_s.fastMs;
        if (m_inFlight)
            m_kickPending = true;  // the poll under way may predate what happened
        else
            m_next = now;
    }
    /// True when a poll should start now.
    bool due(qint64 now) const { return !m_inFlight && now >= m_next; }
    /// A poll was handed to the connection; it may wait there behind other operations (a launch,
    /// an action): that wait is not the poll's, and never makes it stuck.
    void queued(qint64 /*now*/)
    {
        m_inFlight = true;
        m_running = false;
    }
    /// The poll began to run (queued() may come before): the stuck clock starts here.
    void started(qint64 now)
    {
        m_inFlight = true;
        m_running = true;
        m_startedAt = now;
    }
    void finished(qint64 now, const Outcome& o)
    {
        m_inFlight = false;
        m_running = false;
        if (!o.ok) {
            ++m_failures;
            m_interval = qMin(m_s.failedMaxMs, qint64(1000) << qMin(m_failures, 5));
        } else {
            m_failures = 0;
            if (o.changed) {
                m_fastUntil = now + m_s.fastWindowMs;
                m_lastNews = now;  // a run that starts is about to write
            }
            if (o.grew) m_lastNews = now;
            if (!o.active)
                m_interval = m_s.idleMs;
            else if (o.grew || (o.running && now - m_lastNews < m_s.quietAfterMs))
                m_interval = m_s.growingMs;
            else if (now < m_fastUntil)
                m_interval = m_s.fastMs;
            else
                m_interval = qMin(qMax(m_s.fastMs, m_interval + m_interval / 2), o.running ? m_s.runningMaxMs : m_s.queuedMaxMs);
        }
        m_next = m_kickPending ? now : now + m_interval;
        m_kickPending = false;
    }
    bool inFlight() const { return m_inFlight; }
    /// Running (not only queued) for longer than timeoutMs.
    bool stuck(qint64 now) const { return m_inFlight && m_running && now - m_startedAt > m_s.timeoutMs; }
    /// Gives up on a stuck poll: it counts as a failed one.
    void abandon(qint64 now) { finished(now, Outcome{false}); }
    /// When the next poll is due (absolute, like `now`); a poll running is due when it would be
    /// stuck; one still queued has no time (its start says).
    qint64 nextAt() const
    {
        if (!m_inFlight) return m_next;
        return m_running ? m_startedAt + m_s.timeoutMs : std::numeric_limits<qint64>::max() / 4;
    }
    /// The last wait chosen after a poll.
    qint64 interval() const { return m_interval; }
    int failures() const { return m_failures; }

private:
    Settings m_s;
    qint64 m_interval;
    qint64 m_next = 0;
    qint64 m_fastUntil = 0;
    qint64 m_lastNews = std::numeric_limits<qint64>::min() / 2;  // when files last grew, or a run changed state
    qint64 m_startedAt = 0;
    bool m_inFlight = false;
    bool m_running = false;
    bool m_kickPending = false;
    int m_failures = 0;
};

}  // namespace scaledesk
