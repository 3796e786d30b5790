#include "app/mainwindow.h"

#include "app/progresspanel.h"
#include "charts/chartexport.h"
#include "charts/headless.h"
#include "config/profiles.h"
#include "dialogs/clusterwizard.h"
#include "dialogs/launchdialog.h"
#include "dialogs/plainmessage.h"
#include "dialogs/preferencesdialog.h"
#include "remote/sshtransport.h"
#include "runs/deploy.h"
#include "runs/workspaceconfigs.h"
#include "views/compareview.h"
#include "views/configeditor.h"
#include "views/runview.h"
#include "views/scalingview.h"
#include "views/welcomepanel.h"
#include "workspace/runlistmodel.h"
#include "workspace/workspacecontroller.h"

#include <QAction>
#include <QApplication>
#include <QBuffer>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QGuiApplication>
#include <QHeaderView>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPainter>
#include <QPdfWriter>
#include <QProcess>
#include <QSaveFile>
#include <QScreen>
#include <QSet>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStackedWidget>
#include <QStatusBar>
#include <QSvgGenerator>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

namespace scaledesk::gui {

Status exportWidget(QWidget* view, const QString& path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    QByteArray bytes;
    QBuffer buf(&bytes);
    buf.open(QIODevice::WriteOnly);
    if (suffix == QLatin1String("png")) {
        view->grab().save(&buf, "PNG");
    } else if (suffix == QLatin1String("svg")) {
        QSvgGenerator svg;
        svg.setOutputDevice(&buf);
        svg.setSize(view->size());
        svg.setViewBox(view->rect());
        QPainter p(&svg);
        view->render(&p);
    } else if (suffix == QLatin1String("pdf")) {
        QPdfWriter pdf(&buf);
        pdf.setResolution(96);
        pdf.setPageSize(QPageSize(QSizeF(view->width() * 72.0 / 96, view->height() * 72.0 / 96), QPageSize::Point));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        QPainter p(&pdf);
        view->render(&p);
    } else {
        return Error{ErrorCode::ExportFormat, QStringLiteral("unknown image format '%1' (png, svg or pdf)").arg(suffix), path};
    }
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return Error{ErrorCode::ExportIo, f.errorString(), path};
    f.write(bytes);
    if (!f.commit()) return Error{ErrorCode::ExportIo, QStringLiteral("cannot write: ") + f.errorString(), path};
    return Done{};
}

void MainWindow::closeEvent(QCloseEvent* e)
{
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    QMainWindow::closeEvent(e);
}

MainWindow::MainWindow(WorkspaceController& controller, QWidget* parent) : QMainWindow(parent), m_controller(controller)
{
    setWindowTitle(tr("ScaleDesk — %1").arg(controller.workspace().root()));
    setDefaultExportFolder(controller.workspace().root() + QStringLiteral("/exports"));
    // The first start fills 90 % of the screen; later starts come back where the window was left.
    if (const QScreen* screen = QGuiApplication::primaryScreen())
        resize(screen->availableGeometry().size() * 0.9);
    else
        resize(1400, 900);
    QDockWidget* runsDock = buildNavigator();
    buildToolbar(runsDock);
    QDockWidget* profileDock = buildProfilesDock();
    buildTabs();
    buildWelcome();
    // Long work: progress and Cancel in the status bar.
    m_progress = new ProgressPanel;
    statusBar()->addPermanentWidget(m_progress);
    connect(&m_controller, &WorkspaceController::taskProgress, m_progress, &ProgressPanel::setTask);
    connect(&m_controller, &WorkspaceController::taskEnded, m_progress, &ProgressPanel::endTask);
    connect(m_progress, &ProgressPanel::cancelRequested, &m_controller, &WorkspaceController::cancelTask);

    buildMenus(runsDock, profileDock);

    QSettings settings;
    if (settings.contains(QStringLiteral("window/geometry"))) {
        restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
        restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    }

    followRunList();
}

void MainWindow::showTabs(QWidget* tab)
{
    m_welcomeDismissed = true;
    m_central->setCurrentWidget(m_tabs);
    if (tab) m_tabs->setCurrentWidget(tab);
}

QDockWidget* MainWindow::buildNavigator()
{
    // Navigator: every run, filterable, sortable by any column, multi-select, draggable.
    m_model = new RunListModel(this);
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(RunListModel::SortRole);
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
    m_table->setWordWrap(false);  // a run id stays on one line, elided in the middle if it must
    m_table->setTextElideMode(Qt::ElideMiddle);
    // The run column fits its ids (measured on up to 200 rows, so 10,000 runs still open fast).
    m_table->horizontalHeader()->setResizeContentsPrecision(200);
    m_table->horizontalHeader()->setSectionResizeMode(RunListModel::Id, QHeaderView::ResizeToContents);
    auto* filter = m_filter = new QLineEdit;
    filter->setPlaceholderText(tr("Filter runs (id, state, strategy, sweep…)"));
    filter->setClearButtonEnabled(true);
    connect(filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    auto* nav = new QWidget;
    nav->setMinimumWidth(240);
    auto* nl = new QVBoxLayout(nav);
    nl->setContentsMargins(4, 4, 4, 4);
    nl->addWidget(filter);
    nl->addWidget(m_table);
    auto* dock = new QDockWidget(tr("Runs"));
    dock->setObjectName(QStringLiteral("runs"));
    dock->setWidget(nav);
    // Closable, so that its toggle (View menu, toolbar, Ctrl+B) hides it; about a quarter of a
    // 1280 px window to start with (issue 34 item 9: 40 %, and no way to collapse it).
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable | QDockWidget::DockWidgetClosable);
    addDockWidget(Qt::LeftDockWidgetArea, dock);
    resizeDocks({dock}, {360}, Qt::Horizontal);
    dock->toggleViewAction()->setShortcut(QKeySequence(QStringLiteral("Ctrl+B")));
    dock->toggleViewAction()->setToolTip(tr("Show or hide the run navigator (Ctrl+B)"));
    return dock;
}

void MainWindow::buildToolbar(QDockWidget* runsDock)
{
    auto* tools = m_tools = addToolBar(tr("Actions"));
    tools->setObjectName(QStringLiteral("actions"));
    tools->addAction(runsDock->toggleViewAction());
    QAction* launch = m_actions.launch = tools->addAction(tr("Launch…"));
    launch->setShortcut(QKeySequence(QStringLiteral("Ctrl+L")));
    connect(launch, &QAction::triggered, this, [this] {
        if (!m_editor->errors().isEmpty()) {
            plainMessage(this, QMessageBox::Information, tr("Launch"),
                         tr("The config has errors; fix them first:\n%1").arg(m_editor->errors().join(QLatin1Char('\n'))));
            return;
        }
        if (m_editor->restoredFrom().isEmpty() == false || m_editor->editor()->document()->isModified()) m_editor->save();
        LaunchDialog dialog(m_controller.workspace().root(), m_editor->path(), this);
        if (dialog.exec() == QDialog::Accepted && dialog.canLaunch()) launchAndFollow(dialog.request());
    });
    QAction* prefs = m_actions.prefs = tools->addAction(tr("Preferences…"));
    connect(prefs, &QAction::triggered, this, [this] {
        PreferencesDialog d(this);
        if (d.exec() == QDialog::Accepted)
            m_controller.setPollIntervals(PreferencesDialog::activePollMs(), PreferencesDialog::maxIdlePollMs());
    });
    m_controller.setPollIntervals(PreferencesDialog::activePollMs(), PreferencesDialog::maxIdlePollMs());
    QAction* exportView = m_actions.exportView = tools->addAction(tr("Export view…"));
    connect(exportView, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export the view"), exportStartPath(tr("view.png")),
                                                          tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"));
        if (path.isEmpty()) return;
        rememberExportPath(path);
        // The Scaling view is a document: its six plots and warnings as one page, not a screen grab.
        const Status ok = m_tabs->currentWidget() == m_scaling ? renderReportPage(m_scaling->report(), path, 150, m_scaling->plan())
                                                               : exportWidget(m_tabs->currentWidget(), path);
        if (!ok)
            plainMessage(this, QMessageBox::Warning, tr("Export failed"), ok.error().text());
        else
            statusBar()->showMessage(tr("Exported the view to %1").arg(path), 15000);
    });
    QAction* about = m_actions.about = tools->addAction(tr("About"));
    connect(about, &QAction::triggered, this, [this] {
        QString trainer = tr("not found");
        const QString bin = findLocalTrainer();
        if (!bin.isEmpty()) {
            QProcess p;  // a local process that prints one line; not the network
            p.start(bin, {QStringLiteral("--version")});
            if (p.waitForFinished(5000)) trainer = QString::fromUtf8(p.readAllStandardOutput()).trimmed();
        }
        QMessageBox::about(
            this, tr("About ScaleDesk"),
            tr("<h3>ScaleDesk %1</h3><p>Experiment manager and distributed trainer for SLURM clusters.</p>"
               "<p>Qt %2 · libssh %3<br>Trainer: %4</p>")
                .arg(QCoreApplication::applicationVersion(), QString::fromLatin1(qVersion()), libsshVersion(), trainer.toHtmlEscaped()));
    });
    QAction* poll = m_actions.poll = tools->addAction(tr("Refresh"));
    connect(poll, &QAction::triggered, &m_controller, &WorkspaceController::pollNow);
}

QDockWidget* MainWindow::buildProfilesDock()
{
    // Profiles and their connection state (a broken profile file shows its error). The list follows
    // the profile files: one added with `scaledesk profiles add` shows at once.
    auto* profiles = new QListWidget;
    auto describe = [this](QListWidgetItem* item) {
        const QString name = item->data(Qt::UserRole).toString();
        const QString base = item->data(Qt::UserRole + 1).toString();
        const ProfileStatus st = m_controller.profileStatus(name);
        QString state = tr("not polled yet");
        if (st.polls > 0 && st.polledOk)
            state = tr("connected, polled at %1").arg(st.lastOk.toString(QStringLiteral("HH:mm:ss")));
        else if (st.polls > 0)
            state = tr("error: %1").arg(st.lastError);
        if (st.polledOk && !st.lastError.isEmpty())
            state += tr(" (last error at %1: %2)").arg(st.lastErrorAt.toString(QStringLiteral("HH:mm:ss")), st.lastError);
        item->setText(base + QStringLiteral(": ") + state);
        item->setToolTip(item->text());
        if (st.polls > 0) item->setForeground(RunListModel::stateColor(st.polledOk ? RunState::Running : RunState::Failed));
    };
    auto fillProfiles = [this, profiles, describe] {
        profiles->clear();
        for (const auto& e : listProfiles(m_controller.workspace())) {
            auto* item = new QListWidgetItem(profiles);
            item->setData(Qt::UserRole, e.name);
            if (!e.profile) {
                item->setText(tr("%1 — error: %2").arg(e.name, e.error.text()));
                item->setToolTip(item->text());
                item->setForeground(RunListModel::stateColor(RunState::Failed));
                continue;
            }
            item->setData(Qt::UserRole + 1, tr("%1 — %2 (%3)").arg(e.name, profileKindName(e.profile->kind), e.profile->target()));
            describe(item);
        }
    };
    fillProfiles();
    auto* watcher = new QFileSystemWatcher(this);
    QDir().mkpath(m_controller.workspace().profilesDir());
    watcher->addPath(m_controller.workspace().profilesDir());
    connect(watcher, &QFileSystemWatcher::directoryChanged, this, fillProfiles);
    connect(&m_controller, &WorkspaceController::profileState, this, [profiles, describe](const QString& name) {
        for (int i = 0; i < profiles->count(); ++i)
            if (profiles->item(i)->data(Qt::UserRole).toString() == name && profiles->item(i)->data(Qt::UserRole + 1).isValid())
                describe(profiles->item(i));
    });
    auto* profileDock = new QDockWidget(tr("Profiles"));
    profileDock->setObjectName(QStringLiteral("profiles"));
    profileDock->setWidget(profiles);
    profileDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, profileDock);
    m_profiles = profiles;
    // Each profile's own actions: Edit… (the wizard), Test and Deploy (the backend's profile test
    // and deploy, as `scaledesk profiles test` and `scaledesk deploy`).
    profiles->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(profiles, &QListWidget::customContextMenuRequested, this, [this, profiles](const QPoint& at) {
        QListWidgetItem* item = profiles->itemAt(at);
        if (!item) return;
        const QString name = item->data(Qt::UserRole).toString();
        QMenu menu;
        QAction* edit = menu.addAction(tr("Edit…"));
        edit->setEnabled(name != QLatin1String("local"));
        QAction* test = menu.addAction(tr("Test"));
        QAction* deploy = menu.addAction(tr("Deploy the trainer"));
        deploy->setEnabled(name != QLatin1String("local"));
        QAction* chosen = menu.exec(profiles->viewport()->mapToGlobal(at));
        if (chosen == edit) addCluster(name);
        if (chosen == test) {
            statusBar()->showMessage(tr("Testing %1…").arg(name), 15000);
            m_controller.testProfile(name);
        }
        if (chosen == deploy) m_controller.deploy(name);
    });
    connect(&m_controller, &WorkspaceController::profileTested, this, [this](const QString& name, bool ok, const QStringList& lines) {
        plainMessage(this, ok ? QMessageBox::Information : QMessageBox::Warning, tr("Test of %1").arg(name),
                     ok ? tr("Every check passed.") : tr("A check failed."), lines.join(QLatin1Char('\n')));
    });
    connect(&m_controller, &WorkspaceController::deployFinished, this, [this](const QString& name, bool ok, const QString& text) {
        if (ok)
            statusBar()->showMessage(tr("%1: %2").arg(name, text), 30000);
        else
            plainMessage(this, QMessageBox::Warning, tr("Deploy to %1").arg(name), text);
    });
    return profileDock;
}

void MainWindow::buildTabs()
{
    m_tabs = new QTabWidget;
    m_runView = new RunView(m_controller);
    m_compare = new CompareView(m_controller);
    m_scaling = new ScalingView(m_controller);
    m_tabs->addTab(m_runView, tr("Run"));
    m_tabs->addTab(m_compare, tr("Compare"));
    m_tabs->addTab(m_scaling, tr("Scaling"));
    m_editor = new ConfigEditor(m_controller);
    // The workspace's own copy of the example configs, the file the command line launches from too:
    // edits never touch the installed ones.
    const auto configs = workspaceConfigFile(m_controller.workspace());
    const QString configFile = configs ? *configs : m_controller.workspace().root() + QStringLiteral("/configs/unet.yaml");
    if (!configs) QTimer::singleShot(0, this, [this, e = configs.error()] { QMessageBox::warning(this, tr("Configs"), e.text()); });
    m_editor->open(configFile);
    m_tabs->addTab(m_editor, tr("Config"));
    QAction* save = m_actions.save = m_tools->addAction(tr("Save config"));
    save->setShortcut(QKeySequence::Save);
    connect(save, &QAction::triggered, this, [this] {
        if (!m_editor->save()) QMessageBox::warning(this, tr("Save"), tr("Cannot write %1").arg(m_editor->path()));
    });
}

void MainWindow::buildWelcome()
{
    // An empty workspace shows the welcome panel in place of the tabs.
    m_welcome = new WelcomePanel;
    m_central = new QStackedWidget;
    m_central->addWidget(m_tabs);
    m_central->addWidget(m_welcome);
    setCentralWidget(m_central);
    QAction* demo = m_actions.demo = new QAction(tr("Run the demo sweep"), this);
    connect(demo, &QAction::triggered, this, [this] {
        if (m_controller.demoRunning()) return;
        showTabs(m_runView);
        m_controller.runDemo();
    });
    connect(m_welcome, &WelcomePanel::demoRequested, demo, &QAction::trigger);
    connect(m_welcome, &WelcomePanel::editorRequested, this, [this] {
        showTabs(m_editor);
        m_editor->editor()->setFocus();
    });
    connect(m_welcome, &WelcomePanel::addClusterRequested, this, [this] { addCluster(); });
    // The demo's runs: each one is selected as it appears, so its curves fill the Run tab live.
    connect(&m_controller, &WorkspaceController::demoRunLaunched, this, [this](const QString& id) { m_selectWhenListed = id; });
    connect(&m_controller, &WorkspaceController::demoFinished, this, [this](bool ok, const QString& text) {
        m_selectWhenListed.clear();
        if (ok) m_scaling->showSweep(DemoSweep::name());
        statusBar()->showMessage(text, 30000);
    });
    QAction* addClusterAction = m_actions.addCluster = new QAction(tr("Add a cluster…"), this);
    connect(addClusterAction, &QAction::triggered, this, [this] { addCluster(); });
    // Runs made elsewhere: the backend's import (as `scaledesk import`), then the first one selected.
    QAction* importAction = m_actions.import = new QAction(tr("Import runs…"), this);
    importAction->setObjectName(QStringLiteral("importRuns"));
    importAction->setShortcut(QKeySequence(QStringLiteral("Ctrl+I")));
    importAction->setToolTip(tr("A NERSC Python run folder, any TensorBoard log folder, or a ScaleDesk run folder; read-only"));
    connect(importAction, &QAction::triggered, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Import runs from a folder"), QDir::homePath());
        if (dir.isEmpty()) return;
        showTabs(m_runView);
        m_controller.importRuns({dir}, {});
    });
    connect(m_welcome, &WelcomePanel::importRequested, importAction, &QAction::trigger);
    connect(&m_controller, &WorkspaceController::importFinished, this,
            [this](bool ok, const QString& text, const QStringList& ids, const QString& sweep) {
                if (ok && !ids.isEmpty()) m_selectWhenListed = ids.first();
                if (ok && !sweep.isEmpty()) m_scaling->followSweep(sweep);  // an itwinai import's sweep: its report at once
                if (!ok) plainMessage(this, QMessageBox::Warning, tr("Import failed"), text);
                statusBar()->showMessage(text, 30000);
            });
    m_actions.welcome = new QAction(tr("Welcome"), this);
    connect(m_actions.welcome, &QAction::triggered, this, [this] { m_central->setCurrentWidget(m_welcome); });
}

void MainWindow::buildMenus(QDockWidget* runsDock, QDockWidget* profileDock)
{
    // Keyboard: Tab leaves the run list (arrows move within it); the toolbar's actions, with their
    // shortcuts, in a menu bar.
    m_table->setTabKeyNavigation(false);
    m_actions.exportView->setShortcut(QKeySequence(QStringLiteral("Ctrl+E")));
    m_actions.poll->setShortcut(QKeySequence::Refresh);  // F5
    m_actions.prefs->setShortcut(QKeySequence::Preferences);
    QAction* find = new QAction(tr("Find"), this);
    find->setShortcut(QKeySequence::Find);  // Ctrl+F: the log's search when the log has focus, else the run filter
    connect(find, &QAction::triggered, this, [this] {
        if (m_tabs->currentWidget() == m_runView && m_runView->isAncestorOf(QApplication::focusWidget())) {
            m_runView->focusLogSearch();
            return;
        }
        m_filter->setFocus(Qt::ShortcutFocusReason);
        m_filter->selectAll();
    });
    QMenu* file = menuBar()->addMenu(tr("&File"));
    // Another config file, or a run definition of your own code: the Config tab edits and checks it,
    // and Launch… launches it.
    QAction* open = file->addAction(tr("Open config or run definition…"), QKeySequence::Open, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open a config file or a run definition"),
                                                          QFileInfo(m_editor->path()).absolutePath(), tr("YAML (*.yaml *.yml)"));
        if (path.isEmpty()) return;
        if (m_editor->editor()->document()->isModified()) m_editor->save();
        if (!m_editor->open(path)) {
            QMessageBox::warning(this, tr("Open"), tr("Cannot read %1").arg(path));
            return;
        }
        m_tabs->setCurrentWidget(m_editor);
    });
    open->setObjectName(QStringLiteral("openConfig"));
    file->addAction(m_actions.save);
    file->addAction(m_actions.exportView);
    file->addSeparator();
    file->addAction(m_actions.prefs);
    file->addSeparator();
    QAction* quit = file->addAction(tr("Quit"), QKeySequence::Quit, this, &QWidget::close);
    quit->setMenuRole(QAction::QuitRole);
    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(m_actions.launch);
    run->addAction(m_actions.demo);
    run->addAction(m_actions.poll);
    run->addAction(find);
    QMenu* view = menuBar()->addMenu(tr("&View"));
    for (int i = 0; i < m_tabs->count(); ++i) {
        QAction* tab = view->addAction(m_tabs->tabText(i), QKeySequence(QStringLiteral("Ctrl+%1").arg(i + 1)), this,
                                       [this, i] { m_tabs->setCurrentIndex(i); });
        tab->setObjectName(QStringLiteral("tab%1").arg(i + 1));
    }
    view->addSeparator();
    view->addAction(runsDock->toggleViewAction());
    view->addAction(profileDock->toggleViewAction());
    file->insertAction(file->actions().value(0), m_actions.addCluster);
    file->insertAction(file->actions().value(1), m_actions.import);
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(m_actions.welcome);
    help->addAction(m_actions.about);
    addAction(find);
}

void MainWindow::followRunList()
{
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        QStringList ids;
        for (const QModelIndex& i : m_table->selectionModel()->selectedRows()) ids << m_proxy->data(i, Qt::UserRole).toString();
        if (ids.size() == 1) m_runView->showRun(ids.first());
        if (ids.size() > 1) {
            m_compare->setRuns(ids);
            m_tabs->setCurrentWidget(m_compare);
        }
    });
    connect(&m_controller, &WorkspaceController::runsChanged, this, [this](const QList<RunSummary>& runs) {
        // Keep the selection across a refresh.
        QStringList selected;
        for (const QModelIndex& i : m_table->selectionModel()->selectedRows()) selected << m_proxy->data(i, Qt::UserRole).toString();
        m_model->setRuns(runs);
        if (!m_selectWhenListed.isEmpty() &&
            std::any_of(runs.begin(), runs.end(), [this](const RunSummary& s) { return s.id == m_selectWhenListed; })) {
            if (!selected.contains(m_selectWhenListed)) selected = {m_selectWhenListed};
            if (!m_controller.demoRunning()) m_selectWhenListed.clear();  // an import's run: selected once
        }
        for (int r = 0; r < m_proxy->rowCount(); ++r)
            if (selected.contains(m_proxy->data(m_proxy->index(r, 0), Qt::UserRole).toString()))
                m_table->selectionModel()->select(m_proxy->index(r, 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
        if (runs.isEmpty() && !m_welcomeDismissed && !m_controller.demoRunning())
            m_central->setCurrentWidget(m_welcome);
        else if (!runs.isEmpty() && m_central->currentWidget() == m_welcome && !m_welcomeDismissed)
            m_central->setCurrentWidget(m_tabs);
        m_scaling->setRuns(runs);
        statusBar()->showMessage(tr("%1 runs").arg(runs.size()), 5000);
    });
    connect(&m_controller, &WorkspaceController::message, this, [this](const QString& m) { statusBar()->showMessage(m, 15000); });
}

bool MainWindow::welcomeShown() const { return m_central->currentWidget() == m_welcome; }

void MainWindow::launchAndFollow(const LaunchRequest& request)
{
    // What was launched is what the user looks at next: its first run selected (the Run tab follows
    // it live) as soon as the index lists it, and the Scaling tab on its sweep.
    if (!request.points.isEmpty()) {
        m_selectWhenListed = request.points.first().runId;
        if (!request.points.first().sweep.isEmpty()) m_scaling->followSweep(request.points.first().sweep);
    }
    m_controller.launch(request);
}

void MainWindow::addCluster(const QString& existing)
{
    std::optional<ClusterProfile> edit;
    if (!existing.isEmpty()) {
        auto p = findProfile(m_controller.workspace(), existing);
        if (!p) {
            plainMessage(this, QMessageBox::Warning, tr("Edit cluster"), p.error().text());
            return;
        }
        edit = *p;
    }
    ClusterWizard wizard(m_controller, edit ? &*edit : nullptr, this);
    wizard.exec();
    if (!wizard.savedFile().isEmpty()) statusBar()->showMessage(tr("Saved the profile %1").arg(wizard.savedFile()), 15000);
}

}  // namespace scaledesk::gui
