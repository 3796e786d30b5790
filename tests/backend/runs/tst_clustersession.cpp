// ClusterSession: operations run on the session's own thread, one at a time, in order, with the
// signal protocol started → progress* → succeeded | failed | cancelled → finished.
#include "remote/localtransport.h"
#include "runs/clustersession.h"
#include "scheduler/localscheduler.h"

#include <QCoreApplication>
#include <QPointer>
#include <QSemaphore>
#include <QSignalSpy>
#include <QTest>
#include <QThread>

using namespace scaledesk;

namespace {
std::unique_ptr<ClusterSession> localSession()
{
    auto t = std::make_unique<LocalTransport>();
    auto s = std::make_unique<LocalScheduler>(*t);
    return std::make_unique<ClusterSession>(std::move(t), std::move(s));
}

// Every signal of an operation, in the order this thread received them.
QStringList* record(RemoteOperation* op, QObject* context)
{
    auto* log = new QStringList;
    QObject::connect(op, &RemoteOperation::started, context, [log] { *log << QStringLiteral("started"); });
    QObject::connect(op, &RemoteOperation::progress, context, [log](const QString& m) { *log << QStringLiteral("progress:") + m; });
    QObject::connect(op, &RemoteOperation::succeeded, context,
                     [log](const QVariant& v) { *log << QStringLiteral("succeeded:") + v.toString(); });
    QObject::connect(op, &RemoteOperation::failed, context,
                     [log](const Error& e) { *log << QStringLiteral("failed:") + errorCodeName(e.code); });
    QObject::connect(op, &RemoteOperation::cancelled, context, [log] { *log << QStringLiteral("cancelled"); });
    QObject::connect(op, &RemoteOperation::finished, context, [log] { *log << QStringLiteral("finished"); });
    return log;
}
}  // namespace

class TestClusterSession : public QObject {
    Q_OBJECT
private slots:
    void runsOnItsOwnThreadWithTheProtocol()
    {
        auto session = localSession();
        QThread* workerThread = nullptr;
        QSemaphore go;
        RemoteOperation* op = session->run(QStringLiteral("echo"), [&](Transport& t, Scheduler&, const auto& progress, const auto&) {
            workerThread = QThread::currentThread();
            go.acquire();  // blocks until the test thread, not waiting on us, releases it
            progress(QStringLiteral("half"));
            auto r = t.exec(QStringLiteral("echo hello"));
            if (!r) return Expected<QVariant>(r.error());
            return Expected<QVariant>(QString::fromUtf8(r->out).trimmed());
        });
        QPointer<RemoteOperation> alive(op);
        std::unique_ptr<QStringList> log(record(op, this));
        QCOMPARE(session->pending(), 1);
        go.release();  // run() returned while the work had not even passed its first line
        QTRY_COMPARE(log->size(), 4);
        QCOMPARE(*log,
                 (QStringList{QStringLiteral("started"), QStringLiteral("progress:half"), QStringLiteral("succeeded:hello"),
                              QStringLiteral("finished")}));
        QVERIFY(workerThread != nullptr && workerThread != QThread::currentThread());
        QCOMPARE(session->pending(), 0);
        QTRY_VERIFY(alive.isNull());  // deleted after finished()
    }

    void failureCarriesTheError()
    {
        auto session = localSession();
        RemoteOperation* op = session->run(QStringLiteral("read"), [](Transport& t, Scheduler&, const auto&, const auto&) {
            auto r = t.readAt(QStringLiteral("/nonexistent/file"), 0, 10);
            if (!r) return Expected<QVariant>(r.error());
            return Expected<QVariant>(QVariant());
        });
        QSignalSpy failed(op, &RemoteOperation::failed);
        QSignalSpy succeeded(op, &RemoteOperation::succeeded);
        QSignalSpy finished(op, &RemoteOperation::finished);
        // QTRY rather than QSignalSpy::wait(): the signal comes from the worker thread, and wait()
        // misses one that arrives before its loop starts.
        QTRY_COMPARE(finished.size(), 1);
        QCOMPARE(failed.size(), 1);
        QCOMPARE(succeeded.size(), 0);
        QCOMPARE(failed.at(0).at(0).value<Error>().code, ErrorCode::TransportNoFile);
    }

    void operationsRunOneAtATimeInOrder()
    {
        auto session = localSession();
        QStringList order;
        QMutex mutex;
        QList<RemoteOperation*> ops;
        for (int i = 0; i < 5; ++i)
            ops << session->run(QString::number(i), [&, i](Transport&, Scheduler&, const auto&, const auto&) {
                QMutexLocker lock(&mutex);
                order << QString::number(i);
                return Expected<QVariant>(i);
            });
        QSignalSpy last(ops.last(), &RemoteOperation::finished);
        QTRY_COMPARE(last.size(), 1);
        QCOMPARE(order,
                 (QStringList{QStringLiteral("0"), QStringLiteral("1"), QStringLiteral("2"), QStringLiteral("3"), QStringLiteral("4")}));
    }

    void cancelledBeforeStartNeverRuns()
    {
        auto session = localSession();
        QSemaphore hold;
        RemoteOperation* first =
            session->run(QStringLiteral("slow"), [&](Transport&, Scheduler&, const auto&, const RemoteOperation& self) {
                hold.acquire();
                return self.cancelRequested() ? Expected<QVariant>(QStringLiteral("stopped early")) : Expected<QVariant>(1);
            });
        bool secondRan = false;
        RemoteOperation* second = session->run(QStringLiteral("queued"), [&](Transport&, Scheduler&, const auto&, const auto&) {
            secondRan = true;
            return Expected<QVariant>(2);
        });
        std::unique_ptr<QStringList> log1(record(first, this)), log2(record(second, this));
        QTRY_COMPARE(log1->value(0), QStringLiteral("started"));
        second->cancel();
        first->cancel();  // running: its result is dropped
        hold.release();
        QTRY_COMPARE(log2->size(), 2);
        QCOMPARE(*log2, (QStringList{QStringLiteral("cancelled"), QStringLiteral("finished")}));
        QCOMPARE(*log1, (QStringList{QStringLiteral("started"), QStringLiteral("cancelled"), QStringLiteral("finished")}));
        QVERIFY(!secondRan);
    }

    void destroyingTheSessionFinishesEveryOperation()
    {
        auto session = localSession();
        QSemaphore hold;
        RemoteOperation* running = session->run(QStringLiteral("running"), [&](Transport&, Scheduler&, const auto&, const auto&) {
            hold.acquire();
            return Expected<QVariant>(1);
        });
        RemoteOperation* queued =
            session->run(QStringLiteral("queued"), [](Transport&, Scheduler&, const auto&, const auto&) { return Expected<QVariant>(2); });
        std::unique_ptr<QStringList> log1(record(running, this)), log2(record(queued, this));
        QTRY_COMPARE(log1->value(0), QStringLiteral("started"));
        hold.release();
        session.reset();  // waits for the running one; the queued one is cancelled
        QTRY_COMPARE(log2->size(), 2);
        QCOMPARE(*log2, (QStringList{QStringLiteral("cancelled"), QStringLiteral("finished")}));
        QTRY_COMPARE(log1->last(), QStringLiteral("finished"));
        QCOMPARE(log1->size(), 3);  // started, then succeeded or cancelled (a race with cancelAll), finished
        QVERIFY(log1->value(1) == QLatin1String("succeeded:1") || log1->value(1) == QLatin1String("cancelled"));
    }
};

QTEST_GUILESS_MAIN(TestClusterSession)
#include "tst_clustersession.moc"
