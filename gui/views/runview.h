#pragma once

#include "runs/runactions.h"

#include <QWidget>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QCheckBox;
class QComboBox;
class QPushButton;

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
    /// The loss chart's log-scale switch.
    QCheckBox* logLossBox() const { return m_logLoss; }
    /// The header line as shown (state, job, how long it ran).
    QString headerText() const;
    QPushButton* cancelButton() const { return m_cancel; }
    QPushButton* stopButton() const { return m_stop; }
    QPushButton* requeueButton() const { return m_requeue; }
    QPushButton* folderButton() const { return m_folder; }
    /// The log selector: "Job output", then one entry per rank of the run, rank 0 first.
    QComboBox* rankSelector() const { return m_rank; }
    /// What the log pane says while it is empty (a rank without a log yet says so).
    QString logPlaceholder() const;
    /// Puts the keyboard in the log's search field (Ctrl+F while the run view has focus).
    void focusLogSearch();

protected:
    void resizeEvent(QResizeEvent* e) override;

private:
    void update(const QStringList& runIds);
    void readNew();
    void showHeader();
    /// Each action's button follows the run's state: enabled where the lifecycle layer allows it,
    /// else disabled with the reason as its tooltip.
    void updateActions();
    void fillRanks(int world, bool hasJob = true);
    /// Asks the action's question (when it has one), then hands it to the controller.
    void trigger(RunAction action);
    WorkspaceController& m_controller;
    QString m_runId;
    QLabel* m_header;
    QPushButton* m_cancel;
    QPushButton* m_stop;
    QPushButton* m_requeue;
    QPushButton* m_folder;
    QList<SeriesChart*> m_charts;
    QCheckBox* m_logLoss = nullptr;
    QPlainTextEdit* m_log;
    QCheckBox* m_follow;
    QLineEdit* m_search;
    QComboBox* m_rank;
    int m_tagCount = -1;  // curves are rebuilt when a run's first points of a tag arrive
};

}  // namespace scaledesk::gui
