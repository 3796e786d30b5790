#pragma once

#include <QMainWindow>

class QAction;
class QDockWidget;
class QLineEdit;
class QListWidget;
class QToolBar;
class QStackedWidget;
class QSortFilterProxyModel;
class QTableView;
class QTabWidget;

#include "core/status.h"

namespace scaledesk {
struct LaunchRequest;
}

namespace scaledesk::gui {

/// A whole view as one image (PNG, SVG or PDF by suffix); an unwritable path is an error naming it.
Status exportWidget(QWidget* view, const QString& path);

class CompareView;
class ProgressPanel;
class WelcomePanel;
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
    WelcomePanel* welcome() const { return m_welcome; }
    /// Whether the welcome panel is shown (an empty workspace) instead of the tabs.
    bool welcomeShown() const;
    ProgressPanel* progressPanel() const { return m_progress; }
    /// Opens the add-cluster wizard (`existing`: edit that profile) and returns when it closes.
    void addCluster(const QString& existing = QString());
    /// Launches (the Launch dialog's OK) and follows what was launched: its first run selected as
    /// soon as it is listed, the Scaling tab on its sweep.
    void launchAndFollow(const LaunchRequest& request);

protected:
    void closeEvent(QCloseEvent* e) override;

private:
    // The constructor's parts, in the order it calls them.
    QDockWidget* buildNavigator();
    void buildToolbar(QDockWidget* runsDock);
    QDockWidget* buildProfilesDock();
    void buildTabs();
    void buildWelcome();
    void buildMenus(QDockWidget* runsDock, QDockWidget* profileDock);
    void followRunList();
    /// Leaves the welcome panel for the tabs, on `tab` when given.
    void showTabs(QWidget* tab);

    WorkspaceController& m_controller;
    struct Actions {  ///< the toolbar's and the menus' actions, made once
        QAction *launch = nullptr, *prefs = nullptr, *exportView = nullptr, *about = nullptr, *poll = nullptr, *save = nullptr;
        QAction *demo = nullptr, *addCluster = nullptr, *import = nullptr, *welcome = nullptr;
    } m_actions;
    QToolBar* m_tools = nullptr;
    QLineEdit* m_filter = nullptr;
    RunListModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QTableView* m_table;
    QTabWidget* m_tabs;
    RunView* m_runView;
    CompareView* m_compare;
    ScalingView* m_scaling;
    ConfigEditor* m_editor;
    QListWidget* m_profiles;
    QStackedWidget* m_central;
    WelcomePanel* m_welcome;
    ProgressPanel* m_progress;
    bool m_welcomeDismissed = false;  ///< the user left the welcome panel: runs or not, the tabs stay
    QString m_selectWhenListed;       ///< the run the navigator selects when it appears (the demo's, an import's)
};

}  // namespace scaledesk::gui
