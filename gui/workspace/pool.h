#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QtConcurrent>

namespace scaledesk::gui {

/// Runs `work` on a pool thread and hands its result to `done` on `context`'s thread (dropped when
/// `context` is gone first). Pool work that reads the workspace opens a store of its own for the
/// task: pool threads outlive the application, and a store must be closed while Qt SQL still exists.
template <typename T, typename Work, typename Done>
void onPool(QObject* context, Work work, Done done)
{
    auto* watcher = new QFutureWatcher<T>(context);
    QObject::connect(watcher, &QFutureWatcher<T>::finished, context, [watcher, done] {
        done(watcher->result());
        watcher->deleteLater();
    });
    watcher->setFuture(QtConcurrent::run(std::move(work)));
}

}  // namespace scaledesk::gui
