// The views (gui/views): the Scaling view's reflow, the config editor (validation, resolution,
// autosave, changes since the newest run), the Run tab's action buttons in every run state, and a
// long status line.
#include "guitest.h"

using namespace scaledesk;
using namespace scaledesk::gui;
using namespace scaledesk::gui::test;

class TestGuiViews : public GuiTestCase {
    Q_OBJECT
private slots:
    // The Scaling view reflows its six charts to the width, 2 columns where two fit and 1 where they
    // do not, never scrolls sideways, and its warnings pane is as tall as its lines (issue 34 item 4).

    // A run definition (your own code) in the Config tab: checked by the loader submit uses, its
    // errors at their line and column, no trainer check; fixed, it lists none.
    void configEditorChecksARunDefinition()
    {
        const QString path = m_tmp.filePath(QStringLiteral("edit/own.yaml"));
        QDir().mkpath(QFileInfo(path).absolutePath());
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("command: [python3, train.py, --batch, '{local_batch}']\nworkers: 4\n");
        f.close();
        WorkspaceController controller(m_tmp.filePath(QStringLiteral("own-edit-ws")));
        ConfigEditor e(controller);
        QVERIFY(e.open(path));
        QTRY_VERIFY(!e.validating());
        QCOMPARE(e.errors().size(), 1);
        QVERIFY2(e.errors().first().startsWith(QStringLiteral("2:1: unknown key 'workers'")), qPrintable(e.errors().first()));
        QCOMPARE(e.configsTree()->topLevelItemCount(), 0);  // no named configs in a run definition
        e.editor()->setPlainText(QStringLiteral("command: [python3, train.py, --batch, '{local_batch}']\nvariants:\n  a: ['{rank}']\n"));
        QTRY_VERIFY_WITH_TIMEOUT(e.errors().size() == 1 && e.errors().first().startsWith(QStringLiteral("3:7: ")), 5000);
        QVERIFY(e.errors().first().contains(QStringLiteral("no placeholder {rank}")));
        e.editor()->setPlainText(QStringLiteral("command: [python3, train.py, --batch, '{local_batch}']\n"));
        QTRY_VERIFY_WITH_TIMEOUT(e.errors().isEmpty(), 5000);
    }
    void theScalingViewReflowsToItsWidth()
    {
        WorkspaceController controller(m_tmp.filePath(QStringLiteral("reflow-ws")));
        ScalingView view(controller);
        view.setSweeps({QStringLiteral("s")});
        ScalingReport rep;
        rep.sweep = QStringLiteral("s");
        for (int world : {1, 2}) {
            ReportGroupRow g;
            g.strategy = QStringLiteral("ddp");
            g.world = g.nodes = world;
            g.repetitions = 1;
            g.epochS = 10.0 / world;
            g.throughput = 100.0 * world;
            g.speedup = world;
            g.ideal = world;
            g.efficiency = 1;
            rep.groups << g;
        }
        emit controller.reportReady(QStringLiteral("s"), rep);
        QCOMPARE(view.chartCount(), 6);
        // Where the trainer measured the gradient noise scale, a seventh chart: B_simple against the loss.
        rep.noiseByLoss = {{0.2, 8}, {0.4, 2}};
        rep.globalBatches = {2, 4};
        emit controller.reportReady(QStringLiteral("s"), rep);
        QCOMPARE(view.chartCount(), 7);
        QVERIFY2(view.chartAt(6)->title().contains(QStringLiteral("Gradient noise scale")), qPrintable(view.chartAt(6)->title()));
        QCOMPARE(view.chartAt(6)->series().size(), 4);  // the points, the curve read from them, the two batches
        rep.noiseByLoss.clear();
        emit controller.reportReady(QStringLiteral("s"), rep);
        QCOMPARE(view.chartCount(), 6);
        view.resize(1280, 760);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTRY_COMPARE(view.chartColumns(), 2);
        QTRY_VERIFY(view.chartViews()[1]->geometry().left() > view.chartViews()[0]->geometry().right());
        const int oneLine = view.warningsList()->height();
        QVERIFY2(oneLine < 60, qPrintable(QString::number(oneLine)));  // "No warnings." is one line, not 110 px
        view.resize(700, 760);
        QTRY_COMPARE(view.chartColumns(), 1);
        QTRY_COMPARE(view.chartViews()[1]->geometry().left(), view.chartViews()[0]->geometry().left());
        for (QScrollBar* bar : view.findChildren<QScrollBar*>())
            if (bar->orientation() == Qt::Horizontal && bar->parentWidget() &&
                qobject_cast<QScrollArea*>(bar->parentWidget()->parentWidget()))
                QVERIFY(!bar->isVisible());
        for (QWidget* v : view.chartViews()) QVERIFY2(v->width() <= 700, qPrintable(QString::number(v->width())));
    }

    void configEditorValidatesResolvesAndAutosaves()
    {
#ifdef SCALEDESK_TRAIN_BIN
        qputenv("SCALEDESK_TRAIN", SCALEDESK_TRAIN_BIN);
#endif
        const QString path = m_tmp.filePath(QStringLiteral("edit/unet.yaml"));
        QDir().mkpath(QFileInfo(path).absolutePath());
        QFile::remove(path);
        QVERIFY(QFile::copy(QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"), path));
        QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
        WorkspaceController controller(m_tmp.filePath(QStringLiteral("edit-ws")));
        {
            ConfigEditor e(controller);
            QVERIFY(e.open(path));
            QTRY_VERIFY(!e.validating());
            QCOMPARE(e.errors(), QStringList());
            auto* configs = e.configsTree();
            QVERIFY(configs);
            const auto found = configs->findItems(QStringLiteral("cpu-tiny"), Qt::MatchExactly);
            QCOMPARE(found.size(), 1);
            QCOMPARE(found[0]->text(1), QStringLiteral("cpu"));
            configs->setCurrentItem(found[0]);
            auto* resolved = e.resolvedTree();
            QVERIFY(resolved->topLevelItemCount() > 10);
            bool sawOwn = false, sawInherited = false;
            for (int i = 0; i < resolved->topLevelItemCount(); ++i) {
                const auto* item = resolved->topLevelItem(i);
                if (item->text(0) == QLatin1String("Nsamples"))
                    sawOwn = item->text(1) == QLatin1String("16") && item->text(2).startsWith(QStringLiteral("cpu-tiny"));
                if (item->text(0) == QLatin1String("data_size")) sawInherited = item->text(2).startsWith(QStringLiteral("cpu "));
            }
            QVERIFY(sawOwn);
            QVERIFY(sawInherited);

            // A wrong type: the trainer's own check names line and column.
            QSignalSpy validity(&e, &ConfigEditor::validityChanged);
            QString text = e.editor()->toPlainText();
            const int at = int(text.indexOf(QStringLiteral("Nsamples: 16")));
            QVERIFY(at > 0);
            text.replace(at, 12, QStringLiteral("Nsamples: many"));
            e.editor()->setPlainText(text);
            QTRY_VERIFY_WITH_TIMEOUT(!e.validating() && !e.errors().isEmpty(), 20000);
            QVERIFY2(e.errors().join(QString()).contains(QStringLiteral("Nsamples")), qPrintable(e.errors().join(QLatin1Char('\n'))));
            const int line = int(text.left(at).count(QLatin1Char('\n'))) + 1;
            QVERIFY2(e.errors().first().startsWith(QString::number(line) + QLatin1Char(':')), qPrintable(e.errors().first()));
            QVERIFY(!validity.isEmpty() && !validity.last().at(0).toBool());
            // An error planted in `base` is reported for base and for the configs that inherit it, with
            // the selection left where it was (cpu-tiny).
            QString planted = text;
            planted.replace(at, 14, QStringLiteral("Nsamples: 16"));
            const int epochs = int(planted.indexOf(QStringLiteral("num_epochs: 10")));
            QVERIFY(epochs > 0 && epochs < planted.indexOf(QStringLiteral("short:")));
            planted.replace(epochs, 14, QStringLiteral("num_epochs: ten"));
            e.editor()->setPlainText(planted);
            QVERIFY(e.errors().isEmpty() || !e.errors().join(QString()).contains(QStringLiteral("No errors")));
            QTRY_VERIFY_WITH_TIMEOUT(!e.validating() && !e.errors().isEmpty(), 20000);
            const int epochsLine = int(planted.left(epochs).count(QLatin1Char('\n'))) + 1;
            QCOMPARE(e.errors().size(), 1);  // one error, listed once with every config it breaks
            const QString err = e.errors().first();
            QVERIFY2(err.startsWith(QString::number(epochsLine) + QLatin1Char(':')) && err.contains(QStringLiteral("num_epochs")),
                     qPrintable(err));
            QVERIFY2(err.contains(QStringLiteral("(in base, ")) && err.contains(QStringLiteral("bs64_opt")), qPrintable(err));
            QCOMPARE(configs->currentItem()->text(0), QStringLiteral("cpu-tiny"));
            e.editor()->setPlainText(text);  // back to the Nsamples error, which the autosave checks below
            // Broken YAML is caught at once, before the trainer runs.
            e.editor()->appendPlainText(QStringLiteral("broken: [1, 2"));
            QTRY_VERIFY_WITH_TIMEOUT(!e.validating() && e.errors().join(QString()).contains(QStringLiteral("YAML")), 20000);
            // Unsaved text reaches the autosave folder within a second or so.
            QTRY_VERIFY_WITH_TIMEOUT(
                [&] {
                    QFile f(e.autosavePath());
                    return f.open(QIODevice::ReadOnly) && f.readAll().contains("broken: [1, 2");
                }(),
                5000);
        }
        // As after a crash: the next editor offers the unsaved text back; saving clears it.
        ConfigEditor again(controller);
        QVERIFY(again.open(path));
        QVERIFY(!again.restoredFrom().isEmpty());
        QVERIFY(again.editor()->toPlainText().contains(QStringLiteral("broken: [1, 2")));
        QVERIFY(again.save());
        QVERIFY(!QFile::exists(again.autosavePath()));
        QFile saved(path);
        QVERIFY(saved.open(QIODevice::ReadOnly));
        QVERIFY(saved.readAll().contains("Nsamples: many"));
    }

    // The "changes since" list compares the selected config with the config.yaml of the newest
    // run launched from it (found and resolved on the pool).
    void configEditorListsChangesSinceTheNewestRun()
    {
        const QString path = m_tmp.filePath(QStringLiteral("since/unet.yaml"));
        QDir().mkpath(QFileInfo(path).absolutePath());
        QFile::remove(path);
        QVERIFY(QFile::copy(QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"), path));
        QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
        const QString root = m_tmp.filePath(QStringLiteral("since-ws"));
        auto store = RunStore::open(Workspace(root));
        QVERIFY(store);
        auto addRun = [&](const QString& id, const QString& config, const QByteArray& yaml) {
            RunRecord r;
            r.id = id;
            r.profile = QStringLiteral("local");
            r.configFile = path;
            r.configName = config;
            r.transition(RunState::Completed, QStringLiteral("done"));
            QVERIFY((*store)->save(r));
            if (yaml.isEmpty()) return;
            QFile f(Workspace(root).runDir(id) + QStringLiteral("/config.yaml"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(yaml);
        };
        QFile original(path);
        QVERIFY(original.open(QIODevice::ReadOnly));
        QByteArray before = original.readAll();
        const qsizetype at = before.indexOf("Nsamples: 16");
        QVERIFY(at > 0);
        before.replace(at, 12, "Nsamples: 8");
        addRun(QStringLiteral("tiny-old"), QStringLiteral("cpu-tiny"), before);
        QTest::qWait(5);
        addRun(QStringLiteral("tiny-new"), QStringLiteral("cpu-tiny"), before);
        addRun(QStringLiteral("short-lost"), QStringLiteral("cpu-short"), QByteArray());  // its config.yaml is gone

        WorkspaceController controller(root);
        ConfigEditor e(controller);
        QVERIFY(e.open(path));
        auto select = [&](const QString& name) {
            const auto found = e.configsTree()->findItems(name, Qt::MatchExactly);
            QCOMPARE(found.size(), 1);
            e.configsTree()->setCurrentItem(found[0]);
        };
        auto lines = [&] {
            QStringList out;
            for (int i = 0; i < e.changesList()->count(); ++i) out << e.changesList()->item(i)->text();
            return out;
        };
        select(QStringLiteral("cpu-tiny"));
        QTRY_COMPARE(lines(), QStringList({QStringLiteral("1 change(s) since run tiny-new:"), QStringLiteral("Nsamples: 8 → 16")}));
        select(QStringLiteral("cpu-short"));
        QTRY_VERIFY(!lines().isEmpty());
        QVERIFY2(lines().join(QString()).contains(QStringLiteral("short-lost/config.yaml")), qPrintable(lines().join(QLatin1Char('\n'))));
        select(QStringLiteral("base"));
        QTRY_COMPARE(lines(), QStringList({QStringLiteral("No run was launched from this config yet.")}));
    }

    // Cancel, Checkpoint & stop and Requeue follow the run's state: enabled where the lifecycle
    // layer allows them, disabled with its reason as the tooltip elsewhere, and with no run shown.
    void actionButtonsFollowTheRunState()
    {
        const QString root = m_tmp.filePath(QStringLiteral("states-ws"));
        const QList<RunState> states{RunState::Submitting, RunState::Queued,       RunState::Running,
                                     RunState::Requeued,   RunState::Completed,    RunState::Failed,
                                     RunState::Cancelled,  RunState::SubmitFailed, RunState::Lost};
        {
            auto store = RunStore::open(Workspace(root));
            QVERIFY(store);
            for (RunState st : states) {
                RunRecord r;
                r.id = QStringLiteral("state-") + runStateName(st);
                r.profile = QStringLiteral("offline");  // no such profile: no poll moves these states on
                r.remoteDir = QStringLiteral("/nowhere/") + r.id;
                r.jobId = st == RunState::Submitting ? QString() : QStringLiteral("1");
                r.submitStep = st == RunState::SubmitFailed ? QStringLiteral("sbatch") : QStringLiteral("recorded");
                r.transition(st);
                QVERIFY((*store)->save(r));
            }
        }
        WorkspaceController controller(root);
        RunView view(controller);
        for (QPushButton* b : {view.cancelButton(), view.stopButton(), view.requeueButton()}) {
            QVERIFY(!b->isEnabled());
            QCOMPARE(b->toolTip(), QStringLiteral("Select a run first."));
        }
        QVERIFY(!view.folderButton()->isEnabled());  // no run, no folder to open (issue 34 item 10)
        // The loss on a log axis, as Compare's "Log y" (issue 34); the other charts stay linear.
        QVERIFY(!view.charts()[0]->logY());
        view.logLossBox()->click();
        QVERIFY(view.charts()[0]->logY());
        QVERIFY(!view.charts()[1]->logY());
        view.logLossBox()->click();
        QVERIFY(!view.charts()[0]->logY());
        for (RunState st : states) {
            const QString id = QStringLiteral("state-") + runStateName(st);
            view.showRun(id);
            QTRY_VERIFY(controller.snapshot(id));
            RunRecord r = controller.snapshot(id)->record;
            for (auto [button, action] :
                 {std::pair{view.cancelButton(), RunAction::Cancel}, std::pair{view.stopButton(), RunAction::CheckpointStop},
                  std::pair{view.requeueButton(), RunAction::Requeue}}) {
                const ActionCheck c = checkAction(action, r);
                QCOMPARE(button->isEnabled(), c.allowed);
                QCOMPARE(button->toolTip(), c.reason);
                if (!c.allowed) QVERIFY(!button->toolTip().isEmpty());
            }
            // Spot checks of the rule itself, as a user reads it.
            if (st == RunState::Running)
                QVERIFY(view.cancelButton()->isEnabled() && view.stopButton()->isEnabled() && !view.requeueButton()->isEnabled());
            if (st == RunState::Queued) QVERIFY(view.stopButton()->toolTip().contains(QStringLiteral("not running yet")));
            if (st == RunState::Completed) QVERIFY(!view.cancelButton()->isEnabled() && view.requeueButton()->isEnabled());
            QVERIFY(view.folderButton()->isEnabled());
        }
    }

    void aLongStatusNeverWidensTheWindow()
    {
        // A run whose last message is a long submit error (it widened the window to 2004 px).
        const QString root = m_tmp.filePath(QStringLiteral("ws-long"));
        const QString longMessage =
            QStringLiteral("sbatch: error: ") + QString(QStringLiteral("Batch job submission failed: ")).repeated(40);
        QVERIFY(
            saveLocalRun(root, QStringLiteral("a-run-with-a-rather-long-identifier-x1-r1"), 1, {{RunState::SubmitFailed, longMessage}}));
        WorkspaceController controller(root);
        MainWindow w(controller);
        w.resize(1200, 800);
        w.show();
        QTRY_COMPARE(w.runModel()->rowCount(), 1);
        const int before = w.width();
        w.runTable()->selectRow(0);
        QTRY_VERIFY(w.runView()->headerText().contains(QStringLiteral("Batch job submission failed")));
        QTest::qWait(50);
        QCOMPARE(w.width(), before);
        QVERIFY(w.runView()->headerText().contains(longMessage));  // all of it, in the tooltip
        QVERIFY(w.runTable()->wordWrap() == false);                // run ids stay on one line
    }
};

QTEST_MAIN(TestGuiViews)
#include "tst_gui_views.moc"
