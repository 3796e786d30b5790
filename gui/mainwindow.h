#pragma once

#include <QMainWindow>

class QListWidget;
class QSortFilterProxyModel;
class QTableView;
class QTabWidget;

#include "core/status.h"

namespace scaledesk::gui {

/// A whole view as one image (PNG, SVG or PDF by suffix); an unwritable path is an error naming it.
Status exportWidget(QWidget* view, const QString& path);

class CompareView;
class ConfigEditor;
class RunListModel;
class RunView;
class ScalingView;
class WorkspaceController;

/// Assembles the docks and views and forwards actions; it owns no data (the controller does).
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(WorkspaceController& controller, QWidget* parent = nullptr);
    RunView* runView() const { return m_runView; }
    CompareView* compareView() const { return m_compare; }
    ScalingView* scalingView() const { return m_scaling; }
    QTabWidget* tabs() const { return m_tabs; }
    ConfigEditor* configEditor() const { return m_editor; }
    QListWidget* profileList() const { return m_profiles; }
    QTableView* runTable() const { return m_table; }
    RunListModel* runModel() const { return m_model; }

protected:
    void closeEvent(QCloseEvent* e) override;

private:
    WorkspaceController& m_controller;
    RunListModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QTableView* m_table;
    QTabWidget* m_tabs;
    RunView* m_runView;
    CompareView* m_compare;
    ScalingView* m_scaling;
    ConfigEditor* m_editor;
    QListWidget* m_profiles;
};

}  // namespace scaledesk::gui
