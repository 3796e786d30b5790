#pragma once

#include <QWidget>

class QLabel;
class QProgressBar;
class QToolButton;

namespace scaledesk::gui {

/// The status bar's progress for long work (a launch, the demo sweep, a deploy, a report, the
/// first read of a large run): the newest task's text, a bar (busy when the amount is not known)
/// and Cancel; "+N more" when several run, each listed in the tooltip. Hidden when nothing runs.
class ProgressPanel : public QWidget {
    Q_OBJECT
public:
    explicit ProgressPanel(QWidget* parent = nullptr);
    /// Shows or updates a task (`total` 0: a busy bar).
    void setTask(const QString& task, const QString& text, qint64 done, qint64 total);
    void endTask(const QString& task);
    QProgressBar* bar() const { return m_bar; }
    QToolButton* cancelButton() const { return m_cancel; }

signals:
    void cancelRequested(const QString& task);

private:
    struct Entry {
        QString text;
        qint64 done = 0;
        qint64 total = 0;
    };
    void show();
    QHash<QString, Entry> m_tasks;
    QStringList m_order;
    QLabel* m_label;
    QProgressBar* m_bar;
    QToolButton* m_cancel;
};

}  // namespace scaledesk::gui
