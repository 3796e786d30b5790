#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QCheckBox;
class QComboBox;

namespace scaledesk::gui {

class SeriesChart;
class WorkspaceController;

/// One run: its state line, live charts (losses, learning rate, throughput, step-time breakdown)
/// and its log with follow, search and a rank selector; cancel, checkpoint-and-stop, requeue.
class RunView : public QWidget {
    Q_OBJECT
public:
    RunView(WorkspaceController& controller, QWidget* parent = nullptr);
    void showRun(const QString& runId);
    QString runId() const { return m_runId; }
    QList<SeriesChart*> charts() const { return m_charts; }

private:
    void update(const QStringList& runIds);
    void readNew();
    WorkspaceController& m_controller;
    QString m_runId;
    QLabel* m_header;
    QList<SeriesChart*> m_charts;
    QPlainTextEdit* m_log;
    QCheckBox* m_follow;
    QLineEdit* m_search;
    QComboBox* m_rank;
    int m_tagCount = -1;  // curves are rebuilt when a run's first points of a tag arrive
};

}  // namespace scaledesk::gui
