#include "runs/clustersession.h"

#include <QCoreApplication>
#include <QPointer>
#include <QThread>

namespace scaledesk {

ClusterSession::ClusterSession(std::unique_ptr<Transport> transport, std::unique_ptr<Scheduler> scheduler, QObject* parent)
    : QObject(parent), m_transport(std::move(transport)), m_scheduler(std::move(scheduler))
{
    qRegisterMetaType<scaledesk::Error>();
    m_thread = new QThread(this);
    m_thread->setObjectName(QStringLiteral("scaledesk-cluster"));
    m_worker = new QObject;
    m_worker->moveToThread(m_thread);
    connect(m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    m_thread->start();
}

ClusterSession::~ClusterSession()
{
    cancelAll();
    // Operations still waiting in this thread's queue go to the worker now (cancelled: they only
    // send cancelled() and finished()).
    QCoreApplication::sendPostedEvents(this, QEvent::MetaCall);
    // Quit from the worker's own queue, after every queued operation has sent finished()
    // (cancelled ones at once); QThread::quit() from here would drop them.
    QMetaObject::invokeMethod(
        m_worker, [thread = m_thread] { thread->quit(); }, Qt::QueuedConnection);
    m_thread->wait();
}

void ClusterSession::cancelAll()
{
    for (const auto& op : m_ops)
        if (op) op->cancel();
}

RemoteOperation* ClusterSession::run(const QString& description, Work work)
{
    auto* op = new RemoteOperation(description);
    connect(op, &RemoteOperation::finished, op, &QObject::deleteLater);
    m_ops.removeAll(nullptr);
    m_ops << op;
    ++m_pending;
    // Handed to the worker only once control is back in this thread's event loop, so whoever
    // called run() has connected to the operation's signals before any is sent. Signals are
    // emitted from the worker thread; receivers in other threads get them queued, in emission
    // order. `op` is deleted only after finished(), which the work lambda sends last.
    QMetaObject::invokeMethod(
        this, [this, op, work = std::move(work)]() mutable { post(op, std::move(work)); }, Qt::QueuedConnection);
    return op;
}

void ClusterSession::post(RemoteOperation* op, Work work)
{
    QMetaObject::invokeMethod(
        m_worker,
        [this, op, work = std::move(work)] {
            if (op->cancelRequested()) {
                emit op->cancelled();
                const bool last = --m_pending == 0;
                emit op->finished();
                if (last) emit idle();
                return;
            }
            emit op->started();
            const Progress progress = [op](const ProgressStep& step) { emit op->progress(step.text, step.done, step.total); };
            Expected<QVariant> result = work(*m_transport, *m_scheduler, progress, *op);
            if (op->cancelRequested())
                emit op->cancelled();
            else if (result)
                emit op->succeeded(*result);
            else
                emit op->failed(result.error());
            const bool last = --m_pending == 0;
            emit op->finished();
            if (last) emit idle();
        },
        Qt::QueuedConnection);
}

}  // namespace scaledesk
