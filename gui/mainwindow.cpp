#include "mainwindow.h"

#include "compareview.h"
#include "profiles.h"
#include "sshtransport.h"
#include "preferencesdialog.h"
#include "configeditor.h"
#include "launchdialog.h"
#include "deploy.h"
#include "runlistmodel.h"
#include "runview.h"
#include "scalingview.h"
#include "workspacecontroller.h"

#include <QApplication>
#include <QProcess>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QDockWidget>
#include <QHeaderView>
#include <QLineEdit>
#include <QMessageBox>
#include <QSet>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QToolBar>
#include <QAction>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace scaledesk::gui {

MainWindow::MainWindow(WorkspaceController& controller, QWidget* parent) : QMainWindow(parent), m_controller(controller)
{
    setWindowTitle(tr("ScaleDesk — %1").arg(controller.workspace().root()));
    resize(1400, 900);

    // Navigator: every run, filterable, sortable by any column, multi-select, draggable.
    m_model = new RunListModel(this);
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_proxy->setFilterKeyColumn(-1);
    m_table = new QTableView;
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(RunListModel::Created, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setDragEnabled(true);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    auto* filter = new QLineEdit;
    filter->setPlaceholderText(tr("Filter runs (id, state, strategy, sweep…)"));
    filter->setClearButtonEnabled(true);
    connect(filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    auto* nav = new QWidget;
    auto* nl = new QVBoxLayout(nav);
    nl->setContentsMargins(4, 4, 4, 4);
    nl->addWidget(filter);
    nl->addWidget(m_table);
    auto* dock = new QDockWidget(tr("Runs"));
    dock->setObjectName(QStringLiteral("runs"));
    dock->setWidget(nav);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, dock);
    resizeDocks({dock}, {520}, Qt::Horizontal);

    auto* tools = addToolBar(tr("Actions"));
    tools->setObjectName(QStringLiteral("actions"));
    QAction* launch = tools->addAction(tr("Launch…"));
    launch->setShortcut(QKeySequence(QStringLiteral("Ctrl+L")));
    connect(launch, &QAction::triggered, this, [this] {
        if (!m_editor->errors().isEmpty()) {
            QMessageBox::information(this, tr("Launch"), tr("The config has errors; fix them first:\n%1").arg(m_editor->errors().join(QLatin1Char('\n'))));
            return;
        }
        if (m_editor->restoredFrom().isEmpty() == false || m_editor->editor()->document()->isModified()) m_editor->save();
        LaunchDialog dialog(m_controller.workspace().root(), m_editor->path(), this);
        if (dialog.exec() == QDialog::Accepted && dialog.canLaunch()) m_controller.launch(dialog.request());
    });
    QAction* prefs = tools->addAction(tr("Preferences…"));
    connect(prefs, &QAction::triggered, this, [this] {
        PreferencesDialog d(this);
        if (d.exec() == QDialog::Accepted) m_controller.setPollIntervals(PreferencesDialog::activePollMs(), PreferencesDialog::maxIdlePollMs());
    });
    m_controller.setPollIntervals(PreferencesDialog::activePollMs(), PreferencesDialog::maxIdlePollMs());
    QAction* about = tools->addAction(tr("About"));
    connect(about, &QAction::triggered, this, [this] {
        QString trainer = tr("not found");
        const QString bin = findLocalTrainer();
        if (!bin.isEmpty()) {
            QProcess p;  // a local process that prints one line; not the network
            p.start(bin, {QStringLiteral("--version")});
            if (p.waitForFinished(5000)) trainer = QString::fromUtf8(p.readAllStandardOutput()).trimmed();
        }
        QMessageBox::about(this, tr("About ScaleDesk"),
                           tr("<h3>ScaleDesk %1</h3><p>Experiment manager and distributed trainer for SLURM clusters.</p>"
                              "<p>Qt %2 · libssh %3<br>Trainer: %4</p>")
                               .arg(QCoreApplication::applicationVersion(), QString::fromLatin1(qVersion()), libsshVersion(), trainer.toHtmlEscaped()));
    });
    QAction* poll = tools->addAction(tr("Refresh"));
    connect(poll, &QAction::triggered, &m_controller, &WorkspaceController::pollNow);

    m_tabs = new QTabWidget;
    m_runView = new RunView(controller);
    m_compare = new CompareView(controller);
    m_scaling = new ScalingView(controller);
    m_tabs->addTab(m_runView, tr("Run"));
    m_tabs->addTab(m_compare, tr("Compare"));
    m_tabs->addTab(m_scaling, tr("Scaling"));
    m_editor = new ConfigEditor(controller);
    // The workspace's own copy of the example configs: edits never touch the installed ones.
    const QString configs = controller.workspace().root() + QStringLiteral("/configs/unet.yaml");
    if (!QFile::exists(configs)) {
        QDir().mkpath(QFileInfo(configs).absolutePath());
        QFile::copy(bundledTrainerSources() + QStringLiteral("/configs/unet.yaml"), configs);
        QFile::setPermissions(configs, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadGroup | QFileDevice::ReadOther);
    }
    m_editor->open(configs);
    m_tabs->addTab(m_editor, tr("Config"));
    QAction* save = tools->addAction(tr("Save config"));
    save->setShortcut(QKeySequence::Save);
    connect(save, &QAction::triggered, this, [this] {
        if (!m_editor->save()) QMessageBox::warning(this, tr("Save"), tr("Cannot write %1").arg(m_editor->path()));
    });
    setCentralWidget(m_tabs);

    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        QStringList ids;
        for (const QModelIndex& i : m_table->selectionModel()->selectedRows()) ids << m_proxy->data(i, Qt::UserRole).toString();
        if (ids.size() == 1) m_runView->showRun(ids.first());
        if (ids.size() > 1) {
            m_compare->setRuns(ids);
            m_tabs->setCurrentWidget(m_compare);
        }
    });
    connect(&controller, &WorkspaceController::runsChanged, this, [this](const QList<RunSummary>& runs) {
        // Keep the selection across a refresh.
        QStringList selected;
        for (const QModelIndex& i : m_table->selectionModel()->selectedRows()) selected << m_proxy->data(i, Qt::UserRole).toString();
        m_model->setRuns(runs);
        for (int r = 0; r < m_proxy->rowCount(); ++r)
            if (selected.contains(m_proxy->data(m_proxy->index(r, 0), Qt::UserRole).toString()))
                m_table->selectionModel()->select(m_proxy->index(r, 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
        QStringList sweeps;
        for (const auto& s : runs)
            if (!s.sweep.isEmpty() && !sweeps.contains(s.sweep)) sweeps << s.sweep;
        m_scaling->setSweeps(sweeps);
        statusBar()->showMessage(tr("%1 runs").arg(runs.size()), 5000);
    });
    connect(&controller, &WorkspaceController::message, this, [this](const QString& m) { statusBar()->showMessage(m, 15000); });
    if (!controller.isOpen()) QMessageBox::critical(this, tr("Workspace"), controller.openError());
    controller.refresh();
}

}  // namespace scaledesk::gui
