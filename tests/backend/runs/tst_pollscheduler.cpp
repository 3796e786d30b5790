// PollScheduler with made-up times: fast after a launch, bounded while runs are active, backing
// off after failures, one poll at a time, stuck polls abandoned, and never without a next poll.
#include "runs/pollscheduler.h"

#include <QTest>

using namespace scaledesk;

namespace {
PollScheduler::Outcome active(bool grew, bool running = true)
{
    PollScheduler::Outcome o;
    o.grew = grew;
    o.running = running;
    o.active = true;
    return o;
}

// Polls as the scheduler says from `now` until `until`; returns the waits between poll starts.
QList<qint64> drive(PollScheduler& s, qint64& now, qint64 until, const std::function<PollScheduler::Outcome(int)>& outcome,
                    qint64 pollMs = 50)
{
    QList<qint64> waits;
    qint64 last = -1;
    int i = 0;
    while (now < until) {
        now = qMax(now, s.nextAt());
        if (!s.due(now)) {
            now += 1;
            continue;
        }
        if (last >= 0) waits << now - last;
        last = now;
        s.started(now);
        now += pollMs;
        s.finished(now, outcome(i++));
    }
    return waits;
}
}  // namespace

class TestPollScheduler : public QObject {
    Q_OBJECT
private slots:
    void aKickMakesAPollDueAtOnceThenFastForTheWindow()
    {
        PollScheduler s;
        qint64 now = 100000;
        QVERIFY(s.due(now));  // a new scheduler polls at once
        s.kick(now);
        QVERIFY(s.due(now));
        // Nothing grows during the fast window (the trainer is starting): still every second.
        const auto waits = drive(s, now, 100000 + 29000, [](int) { return active(false, false); });
        QVERIFY(waits.size() >= 25);
        for (qint64 w : waits) QVERIFY2(w <= 1000 + 50, qPrintable(QString::number(w)));
    }

    void whileFilesGrowItPollsEverySecond()
    {
        PollScheduler s;
        qint64 now = 0;
        s.kick(now);
        const auto waits = drive(s, now, 120000, [](int) { return active(true); });
        for (qint64 w : waits) QVERIFY(w <= 1050);
    }

    // The local profile's poll costs milliseconds: while its files grow, every 500 ms (half the
    // interval); the slow
    // end of the schedule is the same as a cluster's.
    void aLocalProfilePollsTwiceAsOftenWhileFilesGrow()
    {
        const PollSettings local = PollSettings().forProfile(true), remote = PollSettings().forProfile(false);
        QCOMPARE(remote.growingMs, PollSettings().growingMs);
        QCOMPARE(remote.fastMs, PollSettings().fastMs);
        QCOMPARE(local.growingMs, 500);
        QCOMPARE(local.fastMs, 500);
        PollSettings chosen;  // a user's choice of 3 s: the local profile polls at half of it
        chosen.growingMs = 3000;
        QCOMPARE(chosen.forProfile(true).growingMs, 1500);
        QCOMPARE(local.runningMaxMs, remote.runningMaxMs);
        QCOMPARE(local.idleMs, remote.idleMs);
        PollScheduler s(local);
        qint64 now = 0;
        s.kick(now);
        const auto waits = drive(s, now, 60000, [](int) { return active(true); });
        QVERIFY(waits.size() >= 100);
        for (qint64 w : waits) QVERIFY2(w <= 550, qPrintable(QString::number(w)));
        // Quiet again: the waits grow back to the running maximum.
        const auto quiet = drive(s, now, 180000, [](int) { return active(false, true); });
        QCOMPARE(quiet.last(), local.runningMaxMs + 50);  // the wait plus the poll's own 50 ms
    }

    void aRunningRunThatIsQuietIsPolledAtLeastEveryFiveSeconds()
    {
        PollScheduler s;
        qint64 now = 0;
        s.kick(now);
        const auto waits = drive(s, now, 300000, [](int) { return active(false, true); });
        qint64 longest = 0;
        for (qint64 w : waits) longest = qMax(longest, w);
        QVERIFY(longest > 2000);        // it does back off after the fast window
        QVERIFY(longest <= 5000 + 50);  // but never beyond the bound
    }

    void aRunThatWroteRecentlyIsPolledEverySecondBetweenItsWrites()
    {
        PollScheduler s;
        qint64 now = 0;
        s.kick(now);
        // A step every 3.5 s: most polls find nothing new, yet none waits more than a second, so
        // each write shows within about a second of it.
        const auto waits = drive(s, now, 200000, [&](int) { return active(now % 3500 < 1100, true); });
        for (qint64 w : waits) QVERIFY2(w <= 1050, qPrintable(QString::number(w)));
        // Then it stops writing: a minute later the polls back off (to the 5 s bound).
        qint64 later = now;
        const auto quiet = drive(s, later, now + 180000, [](int) { return active(false, true); });
        QVERIFY(quiet.last() > 4000);
    }

    void queuedRunsAreWaitedForAtMostFifteenSeconds()
    {
        PollScheduler s;
        qint64 now = 0;
        s.kick(now);
        const auto waits = drive(s, now, 600000, [](int) { return active(false, false); });
        QCOMPARE(waits.last(), qint64(15000 + 50));
    }

    void aStateChangeStartsANewFastWindow()
    {
        PollScheduler s;
        qint64 now = 0;
        s.kick(now);
        drive(s, now, 200000, [](int) { return active(false, true); });
        QVERIFY(s.interval() >= 4000);
        s.started(now);
        PollScheduler::Outcome changed = active(false, true);
        changed.changed = true;
        s.finished(now + 10, changed);
        QCOMPARE(s.nextAt(), now + 10 + 1000);
    }

    void failuresBackOffAndRecover()
    {
        PollScheduler s;
        qint64 now = 0;
        QList<qint64> waits;
        for (int i = 0; i < 8; ++i) {
            s.started(now);
            s.finished(now, PollScheduler::Outcome{false});
            waits << s.nextAt() - now;
            now = s.nextAt();
        }
        QCOMPARE(waits, (QList<qint64>{2000, 4000, 8000, 15000, 15000, 15000, 15000, 15000}));
        QCOMPARE(s.failures(), 8);
        s.started(now);
        s.finished(now, active(true));  // the next one works
        QCOMPARE(s.failures(), 0);
        QCOMPARE(s.nextAt() - now, qint64(1000));
    }

    void onePollAtATimeAndAKickDuringOneIsNotLost()
    {
        PollScheduler s;
        s.started(0);
        QVERIFY(s.inFlight());
        QVERIFY(!s.due(100000));  // never two at once
        s.kick(500);              // an action while the poll runs
        QVERIFY(!s.due(600));
        s.finished(700, active(false, false));
        QVERIFY(s.due(700));  // the poll that follows the action is not left for later
    }

    void aStuckPollIsAbandonedAndTheScheduleGoesOn()
    {
        PollScheduler::Settings settings;
        settings.timeoutMs = 30000;
        PollScheduler s(settings);
        s.started(1000);
        QVERIFY(!s.stuck(30000));
        QVERIFY(s.stuck(31001));
        QCOMPARE(s.nextAt(), qint64(31000));  // when it would count as stuck
        s.abandon(31001);
        QVERIFY(!s.inFlight());
        QCOMPARE(s.failures(), 1);
        QCOMPARE(s.nextAt(), qint64(31001 + 2000));
    }

    // A poll that waits in the connection's queue (behind a launch) is not stuck: the clock starts
    // when it starts to run.
    void aQueuedPollIsNeverStuck()
    {
        PollScheduler::Settings settings;
        settings.timeoutMs = 30000;
        PollScheduler s(settings);
        s.queued(1000);
        QVERIFY(s.inFlight());
        QVERIFY(!s.due(500000));
        QVERIFY(!s.stuck(500000));
        QVERIFY(s.nextAt() > 500000);
        s.started(500000);
        QVERIFY(!s.stuck(530000));
        QVERIFY(s.stuck(530001));
        QCOMPARE(s.nextAt(), qint64(530000));
    }

    void noActiveRunsMeansAnOccasionalLook()
    {
        PollScheduler s;
        s.started(0);
        s.finished(0, PollScheduler::Outcome{});
        QCOMPARE(s.nextAt(), qint64(30000));
    }
};

QTEST_GUILESS_MAIN(TestPollScheduler)
#include "tst_pollscheduler.moc"
