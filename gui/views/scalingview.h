#pragma once

#include "analysis/planner.h"
#include "analysis/scalingreport.h"
#include "runs/runstore.h"

#include <QWidget>

class QChart;
class QCheckBox;
class QComboBox;
class QGridLayout;
class QListWidget;
class QScrollArea;

namespace scaledesk::gui {

class WorkspaceController;

/// A sweep's scaling report: the six plots and the report's warnings, shown not hidden; exports
/// every plot (PNG, SVG, PDF) and the tables (CSV, Markdown) to a folder.
class ScalingView : public QWidget {
    Q_OBJECT
public:
    ScalingView(WorkspaceController& controller, QWidget* parent = nullptr);
    /// The runs as the index lists them: the sweeps for the combo box, and the shown sweep's report
    /// read again whenever one of its runs appears or changes state (queued → running → completed),
    /// so the charts follow the runs as the Run tab does.
    void setRuns(const QList<RunSummary>& runs);
    void setSweeps(const QStringList& sweeps);
    /// Shows `sweep` as soon as the index lists it (a sweep just launched), or at once when it does.
    void followSweep(const QString& sweep);
    QString currentSweep() const;
    /// Asks for the sweep's report; the charts follow when it has been read.
    void showSweep(const QString& sweep);
    const ScalingReport& report() const { return m_report; }
    /// Epoch time with validation (the report's includeValidation option).
    QCheckBox* includeValidationBox() const { return m_includeValidation; }
    /// Overlays scaledesk plan's prediction (dashed, over its 90 % range) on epoch time and efficiency.
    QCheckBox* predictionBox() const { return m_prediction; }
    /// The prediction drawn now (null: none).
    const Plan* plan() const { return m_hasPlan ? &m_plan : nullptr; }
    int chartCount() const;
    /// The chart shown at `i` (0: epoch time, then speedup, efficiency, throughput, breakdown, time-to-target).
    QChart* chartAt(int i) const;
    /// The charts' columns now: 2 where the view is wide enough for two, else 1 (no horizontal scrolling).
    int chartColumns() const { return m_columns; }
    /// The chart views, in chartAt() order (their geometry, for tests).
    const QList<QWidget*>& chartViews() const { return m_views; }
    QListWidget* warningsList() const { return m_warnings; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void layoutCharts();
    void fitWarnings();
    void showReport(const QString& sweep, const ScalingReport& report);
    void showPlan(const QString& sweep, const Plan& plan, const QString& error);
    void redraw();
    void exportAll();
    WorkspaceController& m_controller;
    QComboBox* m_sweep;
    QCheckBox* m_includeValidation;
    QCheckBox* m_prediction;
    Plan m_plan;
    bool m_hasPlan = false;
    QString m_planError;
    QGridLayout* m_grid;
    QScrollArea* m_scroll;
    int m_columns = 2;
    QListWidget* m_warnings;
    ScalingReport m_report;
    QList<QWidget*> m_views;
    QString m_pendingSweep;  ///< followSweep()'s, until the index lists it
    QString m_runsSeen;      ///< the shown sweep's runs and states when its report was last asked for
    QString m_runsSeenOf;    ///< the sweep m_runsSeen belongs to
    QList<RunSummary> m_runs;
};

}  // namespace scaledesk::gui
