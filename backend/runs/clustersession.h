#pragma once

#include "core/expected.h"
#include "core/progress.h"
#include "remote/transport.h"
#include "scheduler/scheduler.h"

#include <QObject>
#include <QPointer>
#include <QString>
#include <QVariant>

#include <atomic>
#include <functional>
#include <memory>

class QThread;

namespace scaledesk {

/// One operation on a cluster. Signals, in this order: started(), any number of progress(),
/// then exactly one of succeeded() / failed() / cancelled(), then finished(). The object deletes
/// itself (deleteLater) after finished(); keep a QPointer to it, not a raw pointer.
class RemoteOperation : public QObject {
    Q_OBJECT
public:
    QString description() const { return m_description; }
    /// Not started yet: it never starts (cancelled(), finished()). Running: the work may notice
    /// (cancelRequested) and stop early; either way its result is dropped and cancelled() is sent.
    void cancel() { m_cancel = true; }
    bool cancelRequested() const { return m_cancel; }

signals:
    void started();
    /// `total` 0: the amount is not known.
    void progress(const QString& message, qint64 done, qint64 total);
    void succeeded(const QVariant& result);
    void failed(const scaledesk::Error& error);
    void cancelled();
    void finished();

private:
    friend class ClusterSession;
    explicit RemoteOperation(QString description) : m_description(std::move(description)) {}
    QString m_description;
    std::atomic_bool m_cancel{false};
};

/// One cluster's connection for the GUI: the profile's Transport and Scheduler, used only on the
/// session's own worker thread, one operation at a time in the order they were asked for, so the
/// GUI thread never waits on the network. Results come back by signal (queued to the caller's
/// thread).
class ClusterSession : public QObject {
    Q_OBJECT
public:
    using Progress = ProgressFn;
    using Work = std::function<Expected<QVariant>(Transport&, Scheduler&, const Progress&, const RemoteOperation&)>;

    ClusterSession(std::unique_ptr<Transport> transport, std::unique_ptr<Scheduler> scheduler, QObject* parent = nullptr);
    /// Cancels what has not started, waits for the running operation, then stops the thread.
    ~ClusterSession() override;

    /// Queues `work`; returns at once. It starts once control is back in the event loop, so
    /// connect to the operation's signals right after this call. The signals tell how it went.
    RemoteOperation* run(const QString& description, Work work);
    /// Cancels every operation that has not finished.
    void cancelAll();
    /// Operations queued or running.
    int pending() const { return m_pending.load(); }

signals:
    /// The last operation queued has finished (sent from the session's thread).
    void idle();

private:
    void post(RemoteOperation* op, Work work);
    std::unique_ptr<Transport> m_transport;
    std::unique_ptr<Scheduler> m_scheduler;
    QThread* m_thread = nullptr;
    QObject* m_worker = nullptr;  // lives on m_thread; queued calls run there in order
    std::atomic_int m_pending{0};
    QList<QPointer<RemoteOperation>> m_ops;
};

}  // namespace scaledesk
