// The workspace layer (gui/workspace): the run model (QAbstractItemModelTester, sort by stored
// values) and a record changed by another process reaching the snapshot.
#include "guitest.h"

using namespace scaledesk;
using namespace scaledesk::gui;
using namespace scaledesk::gui::test;

class TestGuiWorkspace : public GuiTestCase {
    Q_OBJECT
private slots:
    void runModelPassesTheModelTester()
    {
        RunListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QList<RunSummary> runs;
        for (int i = 0; i < 50; ++i) {
            RunSummary s;
            s.id = QStringLiteral("run-%1").arg(i);
            s.state = i % 3 ? RunState::Completed : RunState::Running;
            s.strategy = QStringLiteral("ddp");
            s.nodes = 1 + i % 4;
            s.ranksPerNode = 4;
            if (i == 5) s.state = RunState::Queued, s.message = QStringLiteral("local: PENDING (waiting for 2 of 2 slots (cores))");
            runs << s;
        }
        model.setRuns(runs);
        QCOMPARE(model.rowCount(), 50);
        // Why a queued run waits is in its Detail column.
        QCOMPARE(model.headerData(RunListModel::Detail, Qt::Horizontal).toString(), QStringLiteral("Detail"));
        QCOMPARE(model.data(model.index(5, RunListModel::State)).toString(), QStringLiteral("queued"));
        QCOMPARE(model.data(model.index(5, RunListModel::Detail)).toString(),
                 QStringLiteral("local: PENDING (waiting for 2 of 2 slots (cores))"));
        QCOMPARE(model.data(model.index(7, RunListModel::Ranks)).toInt(), 16);
        QCOMPARE(model.data(model.index(3, RunListModel::State)).toString(), QStringLiteral("running"));
        // The table sorts by the stored values (SortRole): times as ISO, ranks as numbers.
        for (int i = 0; i < runs.size(); ++i)
            runs[i].created = QStringLiteral("2026-12-05T%1:00:00.000Z").arg(23 - i % 24, 2, 10, QLatin1Char('0'));
        model.setRuns(runs);
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(RunListModel::SortRole);
        proxy.sort(RunListModel::Created, Qt::AscendingOrder);
        QCOMPARE(proxy.index(0, RunListModel::Created).data().toString(), QStringLiteral("2026-12-05 00:00:00"));
        QCOMPARE(proxy.index(49, RunListModel::Created).data().toString(), QStringLiteral("2026-12-05 23:00:00"));
        proxy.sort(RunListModel::Ranks, Qt::DescendingOrder);
        QCOMPARE(proxy.index(0, RunListModel::Ranks).data().toInt(), 16);
        QCOMPARE(proxy.index(49, RunListModel::Ranks).data().toInt(), 4);
        model.setRuns({});
        QCOMPARE(model.rowCount(), 0);
    }

    // A run that another process (the command line's `status --wait`) saw complete: the window's
    // next read of the index brings its record, not only its row (the header and the actions
    // follow the snapshot).
    void aRecordChangedByAnotherProcessReachesTheSnapshot()
    {
        const QString root = m_tmp.filePath(QStringLiteral("elsewhere-ws"));
        RunRecord r;
        r.id = QStringLiteral("elsewhere");
        r.profile = QStringLiteral("no-such-profile");  // no poll of its own: only the index can tell
        r.transition(RunState::Queued, QStringLiteral("job 1"));
        r.transition(RunState::Running, QStringLiteral("running"));
        {
            auto store = RunStore::open(Workspace(root));
            QVERIFY(store);
            QVERIFY((*store)->save(r));
        }
        WorkspaceController controller(root);
        controller.loadRun(r.id);
        QTRY_VERIFY(controller.snapshot(r.id));
        QCOMPARE(controller.snapshot(r.id)->record.state, RunState::Running);
        QSignalSpy updated(&controller, &WorkspaceController::runsUpdated);
        {
            auto other = RunStore::open(Workspace(root));  // as another process would
            QVERIFY(other);
            QVERIFY((*other)->update(r.id, [](RunRecord& x) {
                x.transition(RunState::Completed, QStringLiteral("local: COMPLETED (exit 0)"));
                return Status(Done{});
            }));
        }
        controller.refresh();
        QTRY_COMPARE(controller.snapshot(r.id)->record.state, RunState::Completed);
        QCOMPARE(controller.snapshot(r.id)->record.message, QStringLiteral("local: COMPLETED (exit 0)"));
        QVERIFY(!updated.isEmpty());
        QVERIFY(updated.last().at(0).toStringList().contains(r.id));
    }
};

QTEST_MAIN(TestGuiWorkspace)
#include "tst_gui_workspace.moc"
