#pragma once

#include "analysis/scalingreport.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QGridLayout;
class QListWidget;

namespace scaledesk::gui {

class WorkspaceController;

/// A sweep's scaling report: the six plots and the report's warnings, shown not hidden; exports
/// every plot (PNG, SVG, PDF) and the tables (CSV, Markdown) to a folder.
class ScalingView : public QWidget {
    Q_OBJECT
public:
    ScalingView(WorkspaceController& controller, QWidget* parent = nullptr);
    void setSweeps(const QStringList& sweeps);
    /// Asks for the sweep's report; the charts follow when it has been read.
    void showSweep(const QString& sweep);
    const ScalingReport& report() const { return m_report; }
    /// Epoch time with validation (the report's includeValidation option).
    QCheckBox* includeValidationBox() const { return m_includeValidation; }
    int chartCount() const;

private:
    void showReport(const QString& sweep, const ScalingReport& report);
    void exportAll();
    WorkspaceController& m_controller;
    QComboBox* m_sweep;
    QCheckBox* m_includeValidation;
    QGridLayout* m_grid;
    QListWidget* m_warnings;
    ScalingReport m_report;
    QList<QWidget*> m_views;
};

}  // namespace scaledesk::gui
