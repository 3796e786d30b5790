// The main window (gui/app): export folders, the run navigator, the profiles panel, launch and
// cancel through the lifecycle layer, import, the welcome panel's demo, the keyboard, a run's
// curves, end to end (a screenshot is written when SCALEDESK_SCREENSHOT_DIR is set).
#include "guitest.h"

using namespace scaledesk;
using namespace scaledesk::gui;
using namespace scaledesk::gui::test;

class TestGuiApp : public GuiTestCase {
    Q_OBJECT
private slots:
    // Export dialogs open in the workspace's exports/ folder, then in the folder of the last export
    // (issue 34 item 10: they opened in the process's current directory).
    void exportDialogsStartInTheExportsFolderThenTheLastOne()
    {
        QTemporaryDir root, elsewhere;
        WorkspaceController controller(root.path());
        MainWindow w(controller);
        QCOMPARE(exportStartPath(QStringLiteral("view.png")), root.filePath(QStringLiteral("exports/view.png")));
        QVERIFY(QFileInfo(root.filePath(QStringLiteral("exports"))).isDir());
        rememberExportPath(elsewhere.filePath(QStringLiteral("loss.svg")));
        QCOMPARE(exportStartPath(QStringLiteral("lr.png")), elsewhere.filePath(QStringLiteral("lr.png")));
        rememberExportPath(root.path(), true);
        QCOMPARE(exportStartPath(), root.path());
    }

    // The run navigator hides and shows from the toolbar, the View menu and Ctrl+B, and starts at
    // about a quarter of a 1280 px window (issue 34 item 9).
    void theRunNavigatorCollapses()
    {
        WorkspaceController controller(m_tmp.filePath(QStringLiteral("dock-ws")));
        MainWindow w(controller);
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* dock = w.findChild<QDockWidget*>(QStringLiteral("runs"));
        QVERIFY(dock);
        QTRY_VERIFY(dock->isVisible());
        QVERIFY2(dock->width() <= 1280 * 0.32, qPrintable(QString::number(dock->width())));
        QAction* toggle = dock->toggleViewAction();
        QVERIFY(toggle->isEnabled());
        QCOMPARE(toggle->shortcut(), QKeySequence(QStringLiteral("Ctrl+B")));
        bool onToolbar = false;
        for (auto* bar : w.findChildren<QToolBar*>()) onToolbar = onToolbar || bar->actions().contains(toggle);
        QVERIFY(onToolbar);
        toggle->trigger();
        QTRY_VERIFY(!dock->isVisible());
        toggle->trigger();
        QTRY_VERIFY(dock->isVisible());
        // The config editor's errors wrap instead of being cut.
        QVERIFY(w.configEditor()->errorsList()->wordWrap());
    }

    // The Profiles panel follows the profile files: one added while the window is open shows.
    void profilesPanelFollowsTheFiles()
    {
        const QString root = m_tmp.filePath(QStringLiteral("profiles-ws"));
        WorkspaceController controller(root);
        MainWindow w(controller);
        w.show();
        const int before = w.profileList()->count();
        QFile p(root + QStringLiteral("/profiles/added.yaml"));
        QVERIFY(p.open(QIODevice::WriteOnly));
        p.write("kind: ssh+slurm\nhost: cluster.example.org\nremote_root: /scratch/me\ntrainer: {path: /opt/bin/scaledesk-train}\n");
        p.close();
        QTRY_COMPARE(w.profileList()->count(), before + 1);
        bool shown = false;
        for (int i = 0; i < w.profileList()->count(); ++i)
            shown = shown || w.profileList()->item(i)->text().startsWith(QStringLiteral("added — ssh+slurm"));
        QVERIFY(shown);
    }

    // The whole loop from the window's side: launch a local run, watch it arrive and complete.
    void launchedRunAppearsAndCompletes()
    {
#ifndef SCALEDESK_TRAIN_BIN
        QSKIP("the trainer is not built (SCALEDESK_BUILD_TRAINER=OFF)");
#else
        qputenv("SCALEDESK_TRAIN", SCALEDESK_TRAIN_BIN);
        const QString root = m_tmp.filePath(QStringLiteral("loop-ws"));
        WorkspaceController controller(root);
        LaunchDialog d(root, QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
        QVERIFY2(d.canLaunch(), qPrintable(d.whyNot()));
        LaunchRequest r = d.request();
        r.makeData = true;
        QList<RunSummary> seen;
        connect(&controller, &WorkspaceController::runsChanged, this, [&](const QList<RunSummary>& runs) { seen = runs; });
        controller.launch(r);
        QTRY_VERIFY_WITH_TIMEOUT(seen.size() == 1 && seen[0].state == RunState::Completed, 180000);
        QCOMPARE(seen[0].id, r.points.first().runId);
        QVERIFY(controller.reader(seen[0].id).read({}).newPoints > 0);
#endif
    }

    // The user's own code from the window: the launch dialog takes a run definition (a PyTorch DDP
    // script on 2 ranks), the window selects the launched run and its loss arrives live, point by
    // point, until it completes with every step shown.
    void ownCodeLaunchedFromTheDialogIsFollowedLive()
    {
        const QString root = m_tmp.filePath(QStringLiteral("own-ws"));
        const QString definition = m_tmp.filePath(QStringLiteral("own code.yaml"));
        QFile def(definition);
        QVERIFY(def.open(QIODevice::WriteOnly));
        def.write("command: [/usr/bin/python3, '{code}/train_ddp.py', --epochs, '4', --steps, '6', --batch, '{local_batch}']\n"
                  "code: " SCALEDESK_SOURCE_DIR "/tests/commandrun\n"
                  "env: {OMP_NUM_THREADS: '1'}\n"
                  "variants:\n  slow: [--sleep, '0.15']\n  fast: []\n");
        def.close();
        qputenv("SCALEDESK_SLOTS_DIR", m_tmp.filePath(QStringLiteral("own-slots")).toUtf8());
        WorkspaceController controller(root);
        MainWindow w(controller);
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QWidget* launch = toolbarButton(w, QStringLiteral("Launch…"));
        QVERIFY(launch);
        bool filled = false;
        QString why, defaultSweep;
        QTimer::singleShot(100, this, [&] {
            auto* d = qobject_cast<LaunchDialog*>(QApplication::activeModalWidget());
            if (!d) return;
            d->configFileEdit()->setText(definition);
            defaultSweep = d->sweepEdit()->text();  // from "own code.yaml": a name a sweep can have
            // The form is your code's: its variants and a per-rank batch, no named config.
            if (!d->launchesCommand() || d->configCombo()->isVisible() || !d->variantsEdit()->isVisible()) return;
            d->ranksEdit()->setText(QStringLiteral("2"));
            d->variantsEdit()->setText(QStringLiteral("slow"));
            why = d->whyNot();  // no batch yet: the definition takes {local_batch}
            d->localBatchSpin()->setValue(4);
            d->sweepEdit()->setText(QStringLiteral("mine"));
            // No run of this definition has completed: nothing to predict from, and it says so.
            QTRY_VERIFY_WITH_TIMEOUT(!d->prediction().contains(QStringLiteral("Predicting")), 20000);
            filled =
                d->canLaunch() && d->prediction().contains(QStringLiteral("No prediction: no completed run of run definition 'own code'"));
            const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR");
            if (!shots.isEmpty()) d->grab().save(shots + QStringLiteral("/launch-dialog-own-code.png"));
            QTest::mouseClick(d->buttons()->button(QDialogButtonBox::Ok), Qt::LeftButton);
        });
        QTest::mouseClick(launch, Qt::LeftButton);
        QVERIFY2(filled, "the launch dialog did not take the run definition");
        QVERIFY2(why.contains(QStringLiteral("{local_batch}")), qPrintable(why));
        QVERIFY2(defaultSweep.startsWith(QStringLiteral("own-code-")), qPrintable(defaultSweep));
        // The launched run is selected and followed: its loss arrives while it runs.
        const QString id = QStringLiteral("mine-slow-1x2-r1");
        QTRY_COMPARE_WITH_TIMEOUT(w.runView()->runId(), id, 30000);
        SeriesChart* loss = w.runView()->charts().first();
        QTRY_VERIFY_WITH_TIMEOUT(loss->pointsShown() > 0, 60000);
        const int early = loss->pointsShown();
        auto state = [&] {
            for (int r = 0; r < w.runModel()->rowCount(); ++r)
                if (w.runModel()->data(w.runModel()->index(r, RunListModel::Id)).toString() == id)
                    return w.runModel()->data(w.runModel()->index(r, RunListModel::State)).toString();
            return QString();
        };
        QVERIFY2(early < 24, qPrintable(QStringLiteral("%1 points before the end; state %2").arg(early).arg(state())));
        QTRY_COMPARE_WITH_TIMEOUT(state(), QStringLiteral("completed"), 120000);
        QTRY_COMPARE_WITH_TIMEOUT(loss->pointsShown(), 24, 30000);
        // Your code's loss is not the trainer's L1 loss; the step-time parts it never recorded are said so.
        QCOMPARE(loss->yTitle(), QStringLiteral("Loss"));
        QCOMPARE(w.runView()->charts()[3]->pointsShown(), 0);
        QCOMPARE(w.runView()->charts()[3]->emptyText(), QStringLiteral("Not recorded by this run"));
        const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR");
        if (!shots.isEmpty()) {
            QTest::qWait(300);
            w.grab().save(shots + QStringLiteral("/own-code-run.png"));
        }
        // The next launch of the definition is predicted from that run, or says what it lacks: its
        // 2 ranks' step time holds communication, and the compute needs a 1-rank run.
        QString predicted;
        QTimer::singleShot(100, this, [&] {
            auto* d = qobject_cast<LaunchDialog*>(QApplication::activeModalWidget());
            if (!d) return;
            d->configFileEdit()->setText(definition);
            d->ranksEdit()->setText(QStringLiteral("2"));
            d->variantsEdit()->setText(QStringLiteral("slow"));
            d->localBatchSpin()->setValue(4);
            d->sweepEdit()->setText(QStringLiteral("mine2"));
            QTRY_VERIFY_WITH_TIMEOUT(!d->prediction().contains(QStringLiteral("Predicting")), 20000);
            predicted = d->prediction();
            const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR");
            if (!shots.isEmpty()) d->grab().save(shots + QStringLiteral("/launch-dialog-own-code-next.png"));
            d->reject();
        });
        QTest::mouseClick(launch, Qt::LeftButton);
        QVERIFY2(predicted.contains(QStringLiteral("mine-slow-1x2-r1: 2 ranks: its step time")), qPrintable(predicted));
        qunsetenv("SCALEDESK_SLOTS_DIR");
    }

    // The real window, driven by clicks: launch cpu-tiny twice on the local profile, wait for both
    // to complete, see a run's points in the run view and both runs in the compare view.
    void endToEndThroughTheWindow()
    {
#ifndef SCALEDESK_TRAIN_BIN
        QSKIP("the trainer is not built (SCALEDESK_BUILD_TRAINER=OFF)");
#else
        qputenv("SCALEDESK_TRAIN", SCALEDESK_TRAIN_BIN);
        qputenv("SCALEDESK_TRAINER_SOURCES", SCALEDESK_SOURCE_DIR);
        WorkspaceController controller(m_tmp.filePath(QStringLiteral("e2e-ws")));
        MainWindow w(controller);
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QWidget* launch = toolbarButton(w, QStringLiteral("Launch…"));
        QVERIFY(launch);
        auto launchOnce = [&](const QString& sweep) {
            bool filled = false;
            QTimer::singleShot(100, this, [&] {
                auto* d = qobject_cast<LaunchDialog*>(QApplication::activeModalWidget());
                if (!d) return;
                d->sweepEdit()->setText(sweep);
                d->makeDataCheck()->setChecked(true);
                filled = d->canLaunch();
                QTest::mouseClick(d->buttons()->button(QDialogButtonBox::Ok), Qt::LeftButton);
            });
            QTest::mouseClick(launch, Qt::LeftButton);
            QVERIFY2(filled, "the launch dialog did not accept the form");
        };
        launchOnce(QStringLiteral("first"));
        launchOnce(QStringLiteral("second"));
        auto completed = [&] {
            int n = 0;
            for (int r = 0; r < w.runModel()->rowCount(); ++r)
                if (w.runModel()->data(w.runModel()->index(r, RunListModel::State)).toString() == QLatin1String("completed")) ++n;
            return n;
        };
        QTRY_COMPARE_WITH_TIMEOUT(completed(), 2, 240000);
        // Click the first run in the navigator: its points are in the run view's loss chart.
        QTableView* table = w.runTable();
        const QRect row0 = table->visualRect(table->model()->index(0, 0));
        QTest::mouseClick(table->viewport(), Qt::LeftButton, Qt::NoModifier, row0.center());
        QTRY_VERIFY(w.runView()->charts().first()->pointsShown() > 0);
        // Ctrl-click the second: the compare view takes both.
        const QRect row1 = table->visualRect(table->model()->index(1, 0));
        QTest::mouseClick(table->viewport(), Qt::LeftButton, Qt::ControlModifier, row1.center());
        QTRY_COMPARE(w.compareView()->runs().size(), 2);
        QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.compareView()));
        QTRY_VERIFY(w.compareView()->chart()->pointsShown() > 0);
        // Each curve is labelled by what tells it apart (the sweep here), in colours of its own.
        QStringList names;
        QSet<QRgb> colours;
        for (QAbstractSeries* s : w.compareView()->chart()->chart()->series())
            if (auto* line = qobject_cast<QXYSeries*>(s); line && !line->name().isEmpty()) {
                names << line->name();
                colours.insert(line->color().rgb());
            }
        QVERIFY2(names.contains(QStringLiteral("first")) && names.contains(QStringLiteral("second")),
                 qPrintable(names.join(QLatin1Char(','))));
        QCOMPARE(colours.size(), 2);
#endif
    }

    // An empty workspace opens on the welcome panel. Its demo button runs the demo sweep on this
    // machine, one run at a time with a progress bar in the status bar; each run is selected as it
    // starts, so the Run tab's charts fill live; at the end the Scaling tab has the sweep's report.
    void welcomePanelRunsTheDemoAndChartsFill()
    {
#ifndef SCALEDESK_TRAIN_BIN
        QSKIP("the trainer is not built (SCALEDESK_BUILD_TRAINER=OFF)");
#else
        qputenv("SCALEDESK_TRAIN", SCALEDESK_TRAIN_BIN);
        qputenv("SCALEDESK_TRAINER_SOURCES", SCALEDESK_SOURCE_DIR);
        WorkspaceController controller(m_tmp.filePath(QStringLiteral("welcome-ws")));
        MainWindow w(controller);
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTRY_VERIFY(w.welcomeShown());
        const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR");
        if (!shots.isEmpty()) w.grab().save(shots + QStringLiteral("/welcome.png"));
        WelcomePanel* welcome = w.welcome();
        QVERIFY(welcome->isVisible());
        QVERIFY(welcome->clusterButton()->isVisible() && welcome->editorButton()->isVisible());
        auto* docs = welcome->findChild<QLabel*>(QStringLiteral("docsLink"));
        QVERIFY(docs && docs->text().contains(QStringLiteral("gui.md")));
        // The config editor button leaves the panel for the Config tab; Help → Welcome comes back.
        QTest::mouseClick(welcome->editorButton(), Qt::LeftButton);
        QVERIFY(!w.welcomeShown());
        QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.configEditor()));
        QAction* back = nullptr;
        for (QAction* a : w.findChildren<QAction*>())
            if (a->text() == QStringLiteral("Welcome")) back = a;
        QVERIFY(back);
        back->trigger();
        QVERIFY(w.welcomeShown());

        QSignalSpy finished(&controller, &WorkspaceController::demoFinished);
        QStringList tasks;
        qint64 lastTotal = -1;
        connect(&controller, &WorkspaceController::taskProgress, this, [&](const QString& t, const QString&, qint64, qint64 total) {
            tasks << t;
            if (t == QLatin1String("demo")) lastTotal = total;
        });
        QTest::mouseClick(welcome->demoButton(), Qt::LeftButton);
        QVERIFY(!w.welcomeShown());
        QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.runView()));
        // The status bar shows the demo's progress with a Cancel button.
        QTRY_VERIFY(w.progressPanel()->isVisible());
        QVERIFY(w.progressPanel()->cancelButton()->isVisible());
        QTRY_COMPARE(lastTotal, qint64(4));
        // The first run is selected as it starts and its loss curve fills while it trains.
        QTRY_VERIFY_WITH_TIMEOUT(w.runView()->runId() == QStringLiteral("demo-ddp-1x1-r1"), 60000);
        QTRY_VERIFY_WITH_TIMEOUT(w.runView()->charts().first()->pointsShown() > 0, 120000);
        if (!shots.isEmpty()) {
            QTest::qWait(3000);
            w.grab().save(shots + QStringLiteral("/demo-running.png"));
        }
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 600000);
        QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
        QCOMPARE(w.runModel()->rowCount(), 4);
        for (int r = 0; r < 4; ++r)
            QCOMPARE(w.runModel()->data(w.runModel()->index(r, RunListModel::State)).toString(), QStringLiteral("completed"));
        QVERIFY(w.runView()->runId().startsWith(QStringLiteral("demo-")));
        QTRY_VERIFY(!w.progressPanel()->isVisible());
        // The Scaling tab shows the demo's report: four runs.
        QTRY_COMPARE_WITH_TIMEOUT(w.scalingView()->report().runs.size(), qsizetype(4), 30000);
        QCOMPARE(w.scalingView()->report().sweep, QStringLiteral("demo"));
        QVERIFY(tasks.contains(QStringLiteral("demo")));
        // A true weak-scaling sweep, from what the runs wrote: the 2-rank run trains twice the 1-rank
        // run's global batch per step, at NERSC's scaled learning rate: cpu-demo's sqrt scaling makes
        // the 2-rank run's peak √(8/4) × 1e-3, reached by a linear warm-up over 16 steps (NERSC warms
        // up only a global batch above base_batch_size: the 1-rank run starts its cosine at 1e-3).
        QCOMPARE(w.scalingView()->report().scalingMeasured, QStringLiteral("weak"));
        auto stepRecords = [&](const QString& id) {
            QList<QJsonObject> out;
            QFile f(controller.workspace().runDir(id) + QStringLiteral("/metrics.jsonl"));
            if (!f.open(QIODevice::ReadOnly)) return out;
            for (const QByteArray& line : f.readAll().split('\n')) {
                const QJsonObject o = QJsonDocument::fromJson(line).object();
                if (o.value(QStringLiteral("kind")).toString() == QLatin1String("step")) out << o;
            }
            return out;
        };
        const QList<QJsonObject> one = stepRecords(QStringLiteral("demo-ddp-1x1-r1")), two = stepRecords(QStringLiteral("demo-ddp-1x2-r1"));
        QVERIFY(one.size() >= 8 && two.size() >= 8);
        QCOMPARE(two.first().value(QStringLiteral("samples")).toDouble(), 2 * one.first().value(QStringLiteral("samples")).toDouble());
        QVERIFY(std::abs(one.first().value(QStringLiteral("lr")).toDouble() - 1e-3) < 1e-6);
        for (int i = 0; i < 8; ++i) {
            const double step = two[i].value(QStringLiteral("step")).toDouble();
            const double expected = step / 16 * std::sqrt(8.0 / 4.0) * 1e-3;
            QVERIFY2(std::abs(two[i].value(QStringLiteral("lr")).toDouble() - expected) < 1e-12 * 1e3 * expected,
                     qPrintable(QStringLiteral("step %1: lr %2, expected %3")
                                    .arg(step)
                                    .arg(two[i].value(QStringLiteral("lr")).toDouble())
                                    .arg(expected)));
        }
        // Validation in epoch time (as `report --include-validation`): each run's epoch time grows
        // by its validation time.
        const ReportRunRow trainOnly = w.scalingView()->report().runs.first();
        QVERIFY(!w.scalingView()->includeValidationBox()->isChecked());
        QVERIFY(trainOnly.validationS > 0);
        w.scalingView()->includeValidationBox()->setChecked(true);
        QTRY_VERIFY(std::abs(w.scalingView()->report().runs.first().epochS - trainOnly.epochS) > 1e-9);
        QVERIFY2(std::abs(w.scalingView()->report().runs.first().epochS - (trainOnly.epochS + trainOnly.validationS)) <
                     1e-3 * trainOnly.epochS,
                 qPrintable(QStringLiteral("%1 vs %2 + %3")
                                .arg(w.scalingView()->report().runs.first().epochS)
                                .arg(trainOnly.epochS)
                                .arg(trainOnly.validationS)));
        // The prediction overlay: the model fitted to the demo's runs, each strategy's prediction
        // dashed over its band on epoch time and efficiency, beside the measured lines.
        QVERIFY(!w.scalingView()->plan());
        w.scalingView()->predictionBox()->setChecked(true);
        QTRY_VERIFY_WITH_TIMEOUT(w.scalingView()->plan() != nullptr, 60000);
        QVERIFY(!w.scalingView()->plan()->points.isEmpty());
        for (int chart : {0, 2}) {
            QStringList names;
            int bands = 0;
            for (QAbstractSeries* s : w.scalingView()->chartAt(chart)->series()) {
                names << s->name();
                bands += s->type() == QAbstractSeries::SeriesTypeArea;
            }
            QVERIFY2(names.contains(QStringLiteral("ddp predicted")) && names.contains(QStringLiteral("ddp")),
                     qPrintable(names.join(QLatin1Char(','))));
            QSet<QString> strategies;
            for (const PlanPoint& p : w.scalingView()->plan()->points) strategies.insert(p.strategy);
            QCOMPARE(bands, int(strategies.size()));  // a band per strategy predicted
        }
        // The view's export (its one page) carries the prediction it shows.
        const QString page = m_tmp.filePath(QStringLiteral("predicted-page.svg"));
        QVERIFY(renderReportPage(w.scalingView()->report(), page, 96, w.scalingView()->plan()));
        QFile pageFile(page);
        QVERIFY(pageFile.open(QIODevice::ReadOnly));
        QVERIFY(pageFile.readAll().contains("ddp predicted"));
        w.scalingView()->predictionBox()->setChecked(false);
        QTRY_VERIFY(!w.scalingView()->plan());
        // Runs exist: the next window opens on the tabs.
        MainWindow again(controller);
        controller.refresh();
        QTRY_VERIFY(!again.welcomeShown());
#endif
    }

    // The window's launch and cancel go through the lifecycle layer: the sweep's partial-failure
    // policy is the command line's (tests/backend/cli), and a cancel is in the run's history.
    void windowLaunchAndCancelFollowTheLifecycleLayer()
    {
#ifndef SCALEDESK_TRAIN_BIN
        QSKIP("the trainer is not built (SCALEDESK_BUILD_TRAINER=OFF)");
#else
        qputenv("SCALEDESK_TRAIN", SCALEDESK_TRAIN_BIN);
        const QString root = m_tmp.filePath(QStringLiteral("policy-ws"));
        WorkspaceController controller(root);
        LaunchDialog d(root, QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
        d.sweepEdit()->setText(QStringLiteral("pf"));
        d.configCombo()->setCurrentText(QStringLiteral("cpu-short"));
        QVERIFY2(d.canLaunch(), qPrintable(d.whyNot()));
        LaunchRequest r = d.request();
        r.makeData = true;
        r.points = {r.points[0], r.points[0], r.points[0]};
        for (int i = 0; i < 3; ++i) {
            r.points[i].repetition = i + 1;
            r.points[i].runId = QStringLiteral("pf-ddp-1x1-r%1").arg(i + 1);
        }
        // The second run's folder cannot be made: a dangling link is where it would be (the launch's
        // check finds no folder there, so the other points go on).
        QDir().mkpath(root + QStringLiteral("/local/runs"));
        QVERIFY(QFile::link(root + QStringLiteral("/nowhere"), root + QStringLiteral("/local/runs/pf-ddp-1x1-r2")));
        QSignalSpy launched(&controller, &WorkspaceController::launchFinished);
        controller.launch(r);
        QTRY_COMPARE_WITH_TIMEOUT(launched.size(), 1, 120000);
        QCOMPARE(launched.at(0).at(0).toBool(), false);
        QVERIFY2(launched.at(0).at(1).toString().contains(QStringLiteral("2 of 3 run(s) submitted; 1 failed")),
                 qPrintable(launched.at(0).at(1).toString()));
        auto state = [&](const QString& id) {
            for (const RunSummary& s : controller.runs())
                if (s.id == id) return s.state;
            return RunState::Draft;
        };
        QTRY_COMPARE(state(QStringLiteral("pf-ddp-1x1-r2")), RunState::SubmitFailed);
        QVERIFY(isActive(state(QStringLiteral("pf-ddp-1x1-r1"))) || state(QStringLiteral("pf-ddp-1x1-r1")) == RunState::Completed);
        // Cancel the third once it runs: recorded in its history, and it ends cancelled.
        const QString id = QStringLiteral("pf-ddp-1x1-r3");
        QTRY_COMPARE_WITH_TIMEOUT(state(id), RunState::Running, 120000);
        QSignalSpy acted(&controller, &WorkspaceController::actionFinished);
        controller.cancel(id);
        QTRY_COMPARE_WITH_TIMEOUT(acted.size(), 1, 60000);
        QVERIFY2(acted.at(0).at(2).toBool(), qPrintable(acted.at(0).at(3).toString()));
        QTRY_COMPARE_WITH_TIMEOUT(state(id), RunState::Cancelled, 120000);
        bool noted = false;
        for (const auto& h : controller.snapshot(id)->record.history)
            noted = noted || h.note == QLatin1String("cancel requested by the user");
        QVERIFY(noted);
        // Cancelling again is refused by the same rule the command line uses.
        controller.cancel(id);
        QTRY_COMPARE_WITH_TIMEOUT(acted.size(), 2, 30000);
        QVERIFY(!acted.at(1).at(2).toBool());
        QVERIFY2(acted.at(1).at(3).toString().contains(QStringLiteral("already ended")), qPrintable(acted.at(1).at(3).toString()));
        // The first run is not needed any more: cancel it rather than wait for its ten epochs (minutes
        // under the sanitizers), so nothing is left running.
        if (isActive(state(QStringLiteral("pf-ddp-1x1-r1")))) controller.cancel(QStringLiteral("pf-ddp-1x1-r1"));
        QTRY_VERIFY_WITH_TIMEOUT(!isActive(state(QStringLiteral("pf-ddp-1x1-r1"))), 180000);
#endif
    }

    // An itwinai folder imported from the window: its runs land in the sweep "itwinai", and the
    // Scaling tab follows that sweep and reports it without any user action (as `scaledesk report`).
    void importOfItwinaiRunsShowsTheirScalingReport()
    {
        const QString source = QStringLiteral(SCALEDESK_SOURCE_DIR "/tests/backend/runs/data/itwinai/pr262/scalability-metrics");
        WorkspaceController controller(m_tmp.filePath(QStringLiteral("ws-itwinai")));
        MainWindow w(controller);
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy finished(&controller, &WorkspaceController::importFinished);
        controller.importRuns({source}, {});
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 30000);
        QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
        QCOMPARE(finished.at(0).at(3).toString(), QStringLiteral("itwinai"));
        QTRY_COMPARE(w.scalingView()->currentSweep(), QStringLiteral("itwinai"));
        QTRY_COMPARE_WITH_TIMEOUT(w.scalingView()->report().groups.size(), 4, 30000);
        const ScalingReport& rep = w.scalingView()->report();
        QCOMPARE(rep.definition, QStringLiteral("itwinai"));
        QVERIFY2(rep.warnings.isEmpty(), qPrintable(rep.warnings.join(QLatin1Char('\n'))));
        QCOMPARE(w.scalingView()->chartCount(), 6);
        const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR");
        if (!shots.isEmpty()) {
            QTRY_VERIFY(!w.welcomeShown());
            w.tabs()->setCurrentWidget(w.scalingView());
            QTest::qWait(300);
            w.grab().save(shots + QStringLiteral("/itwinai-import.png"));
        }
    }

    // File → Import… (and the welcome panel's button) imports the NERSC tutorial's run through the
    // backend's importRuns: it appears in the navigator as imported, is selected, its curves show,
    // and every run action is disabled with the reason.
    void importShowsTheRunReadOnly()
    {
        const QString source = QStringLiteral(SCALEDESK_SOURCE_DIR "/tests/backend/runs/data/nersc-example-logs");
        WorkspaceController controller(m_tmp.filePath(QStringLiteral("ws-import")));
        MainWindow w(controller);
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTRY_VERIFY(w.welcomeShown());
        QVERIFY(w.welcome()->importButton()->isVisible());
        QSignalSpy finished(&controller, &WorkspaceController::importFinished);
        // The folder dialog, answered as a user would: the folder typed in, then Choose.
        bool answered = false;
        QTimer::singleShot(0, this, [&] {
            QTRY_VERIFY(qobject_cast<QFileDialog*>(QApplication::activeModalWidget()));
            auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
            dialog->selectFile(source);
            static_cast<QDialog*>(dialog)->accept();
            answered = true;
        });
        QTest::mouseClick(w.welcome()->importButton(), Qt::LeftButton);
        QVERIFY(answered);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 30000);
        QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
        QCOMPARE(finished.at(0).at(2).toStringList(), QStringList{QStringLiteral("base-1GPU-00")});
        QTRY_COMPARE(w.runView()->runId(), QStringLiteral("base-1GPU-00"));
        QTRY_VERIFY_WITH_TIMEOUT(w.runView()->charts().first()->pointsShown() > 0, 30000);
        QCOMPARE(w.runView()->charts().first()->pointsShown(), 22);     // Loss/train and Loss/valid: step 0 and 10 epochs each
        QTRY_VERIFY(w.runView()->charts().at(1)->pointsShown() == 10);  // Learning Rate, per epoch
        // Its log is the NERSC trainer's out.log (no job ran here, so no "Job output").
        auto* log = w.runView()->findChild<QPlainTextEdit*>();
        QVERIFY(log);
        QTRY_VERIFY(log->toPlainText().contains(QStringLiteral("Time taken for epoch 10 is 763.1262722015381 sec")));
        // The navigator says where it came from.
        const QAbstractItemModel* model = w.runTable()->model();
        QCOMPARE(model->rowCount(), 1);
        QCOMPARE(model->index(0, RunListModel::Profile).data().toString(), QStringLiteral("imported"));
        QVERIFY(model->index(0, RunListModel::Profile).data(Qt::ToolTipRole).toString().contains(QStringLiteral("base/1GPU/00")));
        // Read-only: no action applies, and each button says why.
        for (QPushButton* b : {w.runView()->cancelButton(), w.runView()->stopButton(), w.runView()->requeueButton()}) {
            QVERIFY(!b->isEnabled());
            QVERIFY2(b->toolTip().contains(QStringLiteral("read-only")), qPrintable(b->toolTip()));
        }
        const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR");
        if (!shots.isEmpty()) w.grab().save(shots + QStringLiteral("/imported.png"));
        // The same folder again: refused, with the reason in a message box, and nothing added. The
        // dialogs are answered from a timer, which never waits inside their event loops.
        QString boxText;
        QTimer answer;
        answer.setInterval(50);
        connect(&answer, &QTimer::timeout, this, [&] {
            QWidget* modal = QApplication::activeModalWidget();
            if (auto* dialog = qobject_cast<QFileDialog*>(modal)) {
                dialog->selectFile(source);
                static_cast<QDialog*>(dialog)->accept();
            } else if (auto* box = qobject_cast<QMessageBox*>(modal)) {
                boxText = box->text();
                box->close();
                answer.stop();
            }
        });
        answer.start();
        w.findChild<QAction*>(QStringLiteral("importRuns"))->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 2, 30000);
        QVERIFY(!finished.at(1).at(0).toBool());
        QTRY_VERIFY2(boxText.contains(QStringLiteral("in the workspace already")), qPrintable(boxText));
        QCOMPARE(model->rowCount(), 1);
        answer.stop();
        // A run with a tag of its own (a TensorBoard scalar): Compare offers it, and charts it.
        const QString other = m_tmp.filePath(QStringLiteral("elsewhere/top1-run"));
        QVERIFY(QDir().mkpath(other));
        QFile manifest(other + QStringLiteral("/manifest.json"));
        QVERIFY(manifest.open(QIODevice::WriteOnly));
        manifest.write(R"({"run_id":"top1-run","strategy":"ddp","world_size":1,"status":"finished"})");
        manifest.close();
        QFile metrics(other + QStringLiteral("/metrics.jsonl"));
        QVERIFY(metrics.open(QIODevice::WriteOnly));
        for (int i = 0; i < 5; ++i)
            metrics.write(QStringLiteral(R"({"kind":"scalar","tag":"accuracy/top1","step":%1,"t":%2,"value":%3})"
                                         "\n")
                              .arg(100 * i)
                              .arg(1700000000 + i)
                              .arg(0.5 + 0.1 * i)
                              .toUtf8());
        metrics.close();
        controller.importRuns({other}, {});
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 3, 30000);
        QVERIFY2(finished.at(2).at(0).toBool(), qPrintable(finished.at(2).at(1).toString()));
        w.compareView()->setRuns({QStringLiteral("base-1GPU-00"), QStringLiteral("top1-run")});
        QTRY_VERIFY(w.compareView()->tagChoices().contains(QStringLiteral("accuracy/top1")));
        QVERIFY(w.compareView()->tagChoices().startsWith(QStringLiteral("Loss/valid")));
        w.compareView()->setTags({QStringLiteral("accuracy/top1")});
        QTRY_COMPARE(w.compareView()->chart()->pointsShown(), 5);
        QTRY_COMPARE(model->rowCount(), 2);
    }

    void theKeyboardReachesEverything()
    {
        const QString root = m_tmp.filePath(QStringLiteral("ws-keys"));
        WorkspaceController controller(root);
        MainWindow w(controller);
        w.resize(1200, 800);
        w.show();
        QApplication::setActiveWindow(&w);
        QVERIFY(QTest::qWaitForWindowActive(&w));
        // Tab leaves the run list instead of walking its columns.
        w.runTable()->setFocus();
        QTRY_VERIFY(w.runTable()->hasFocus());
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
        QVERIFY(!w.runTable()->hasFocus());
        // Ctrl+F: the run filter.
        QTest::keyClick(&w, Qt::Key_F, Qt::ControlModifier);
        auto* filter = qobject_cast<QLineEdit*>(QApplication::focusWidget());
        QVERIFY(filter && filter->placeholderText().startsWith(QStringLiteral("Filter runs")));
        // Ctrl+1…4 switch tabs.
        QTest::keyClick(&w, Qt::Key_3, Qt::ControlModifier);
        QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.scalingView()));
        QTest::keyClick(&w, Qt::Key_1, Qt::ControlModifier);
        QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.runView()));
        // A menu bar holds every action, with its shortcut.
        QStringList menus;
        for (QAction* a : w.menuBar()->actions()) menus << a->text().remove(QLatin1Char('&'));
        QCOMPARE(menus, (QStringList{QStringLiteral("File"), QStringLiteral("Run"), QStringLiteral("View"), QStringLiteral("Help")}));
        QStringList shortcuts;
        for (QAction* m : w.menuBar()->actions())
            for (QAction* a : m->menu()->actions())
                if (!a->shortcut().isEmpty()) shortcuts << a->text() + QLatin1Char('=') + a->shortcut().toString();
        for (const QString& expected :
             {QStringLiteral("Launch…=Ctrl+L"), QStringLiteral("Refresh=F5"), QStringLiteral("Export view…=Ctrl+E"),
              QStringLiteral("Find=Ctrl+F"), QStringLiteral("Save config=Ctrl+S")})
            QVERIFY2(shortcuts.contains(expected), qPrintable(shortcuts.join(QStringLiteral(", "))));
    }

    void mainWindowShowsARunsCurves()
    {
        // A workspace with one finished run and its mirrored metrics.
        const QString root = m_tmp.filePath(QStringLiteral("ws"));
        {
            QVERIFY(saveLocalRun(
                root, QStringLiteral("demo-ddp-1x2-r1"), 2,
                {{RunState::Queued, QStringLiteral("local: job 1")}, {RunState::Completed, QStringLiteral("local: COMPLETED (exit 0)")}}));
            QFile m(Workspace(root).runDir(QStringLiteral("demo-ddp-1x2-r1")) + QStringLiteral("/metrics.jsonl"));
            QVERIFY(m.open(QIODevice::WriteOnly));
            for (int i = 1; i <= 400; ++i)
                m.write(QStringLiteral("{\"kind\":\"step\",\"step\":%1,\"t\":%2,\"loss\":%3,\"lr\":0.001,\"compute_s\":0.2,\"comm_exposed_"
                                       "s\":0.05,\"data_s\":0.01}\n")
                            .arg(i)
                            .arg(1000 + i)
                            .arg(0.3 * std::exp(-i / 150.0) + 0.02)
                            .toUtf8());
        }
        WorkspaceController controller(root);
        MainWindow w(controller);
        w.resize(1400, 900);
        w.show();
        QTRY_COMPARE(w.runModel()->rowCount(), 1);
        QVERIFY(w.profileList()->count() >= 1);  // the built-in local profile
        QVERIFY(w.profileList()->item(0)->text().startsWith(QStringLiteral("local — local (this machine)")));
        w.runTable()->selectRow(0);
        QTRY_VERIFY(w.runView()->charts().first()->pointsShown() > 0);
        QVERIFY(w.runView()->charts().first()->pointsShown() <= 2 * w.runView()->charts().first()->plotWidth() + 4);
        // The rank selector lists the run's ranks, rank 0 included; a rank without a log says so.
        QComboBox* ranks = w.runView()->rankSelector();
        QCOMPARE(ranks->count(), 3);
        QCOMPARE(ranks->itemText(1), QStringLiteral("Rank 0 (out.log)"));
        QCOMPARE(ranks->itemText(2), QStringLiteral("Rank 1"));
        ranks->setCurrentIndex(2);
        QTRY_VERIFY2(w.runView()->logPlaceholder().contains(QStringLiteral("Rank 1 has written no log yet")),
                     qPrintable(w.runView()->logPlaceholder()));
        ranks->setCurrentIndex(0);
        // Compare: one run gets a hint, not only an empty-looking chart; the smoothing shows its value.
        w.compareView()->setRuns({});
        QVERIFY(w.compareView()->hint().contains(QStringLiteral("Select several runs")));
        w.compareView()->smoothingSlider()->setValue(60);
        QCOMPARE(w.compareView()->smoothingText(), QStringLiteral("0.60"));
        w.compareView()->smoothingSlider()->setValue(0);
        // Compare: one chart per chosen tag.
        w.compareView()->setRuns({QStringLiteral("demo-ddp-1x2-r1")});
        QVERIFY(w.compareView()->hint().contains(QStringLiteral("One run so far")));
        w.compareView()->setTags({QStringLiteral("step/loss"), QStringLiteral("step/lr")});
        QCOMPARE(w.compareView()->charts().size(), 2);
        QTRY_VERIFY(w.compareView()->charts()[0]->pointsShown() > 0);
        // Stacked charts share the height equally.
        w.tabs()->setCurrentWidget(w.compareView());
        QTRY_VERIFY(w.compareView()->charts()[1]->isVisible());
        QVERIFY2(
            std::abs(w.compareView()->charts()[0]->height() - w.compareView()->charts()[1]->height()) <= 2,
            qPrintable(QStringLiteral("%1 vs %2").arg(w.compareView()->charts()[0]->height()).arg(w.compareView()->charts()[1]->height())));
        w.tabs()->setCurrentIndex(0);
        // A whole view as one image.
        for (const char* ext : {"png", "svg", "pdf"}) {
            const QString path = m_tmp.filePath(QStringLiteral("view.%1").arg(QLatin1String(ext)));
            const auto ok = exportWidget(w.runView(), path);
            QVERIFY2(ok, qPrintable(ok ? QString() : ok.error().text()));
            QVERIFY(QFileInfo(path).size() > 5000);
        }
        QCOMPARE(QImage(m_tmp.filePath(QStringLiteral("view.png"))).size(), w.runView()->size());
        const auto bad = exportWidget(w.runView(), QStringLiteral("/proc/nope/view.png"));
        QVERIFY(!bad);
        QVERIFY(bad.error().text().startsWith(QStringLiteral("/proc/nope/view.png")));
        const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR");
        if (!shots.isEmpty()) {
            QTest::qWait(200);
            w.grab().save(shots + QStringLiteral("/main-window-run.png"));
            w.runView()->charts().first()->showCrosshairAt(120);
            w.runView()->charts().first()->grab().save(shots + QStringLiteral("/chart-crosshair.png"));
            w.runView()->charts().first()->hideCrosshair();
            w.tabs()->setCurrentIndex(2);
            QTest::qWait(200);
            w.grab().save(shots + QStringLiteral("/main-window-scaling.png"));
        }
    }
};

QTEST_MAIN(TestGuiApp)
#include "tst_gui_app.moc"
