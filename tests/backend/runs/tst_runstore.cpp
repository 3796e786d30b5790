// The run store: run.json is the truth, the SQLite index a cache rebuilt when missing or corrupt.
#include "runs/runstore.h"

#include <QDir>
#include <QFile>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

using namespace scaledesk;

namespace {
RunRecord makeRun(const QString& id, RunState state, const QString& sweep = QString())
{
    RunRecord r;
    r.id = id;
    r.sweep = sweep;
    r.profile = QStringLiteral("local");
    r.strategy = QStringLiteral("fused");
    r.nodes = 2;
    r.ranksPerNode = 4;
    r.transition(RunState::Draft);
    r.transition(RunState::Submitting, QStringLiteral("uploading"));
    if (state != RunState::Submitting) r.transition(state, QStringLiteral("note for %1").arg(runStateName(state)));
    r.jobId = QStringLiteral("42");
    r.offsets.insert(QStringLiteral("metrics.jsonl"), 12345678901LL);
    return r;
}
}  // namespace

class TestRunStore : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    Workspace ws() const { return Workspace(m_dir.path()); }

private slots:
    void init()
    {
        QDir(m_dir.path()).removeRecursively();
        QDir().mkpath(m_dir.path());
    }

    void saveLoadRoundTripKeepsEverything()
    {
        auto store = RunStore::open(ws());
        QVERIFY(store);
        QVERIFY((*store)->wasRebuilt());  // a new workspace has no index yet
        const RunRecord r = makeRun(QStringLiteral("a b 'c' $(touch x); ü"), RunState::Running, QStringLiteral("s1"));
        QVERIFY((*store)->save(r));
        auto back = (*store)->load(r.id);
        QVERIFY2(back, qPrintable(back ? QString() : back.error().text()));
        QCOMPARE(back->toJson(), r.toJson());
        QCOMPARE(back->history.size(), 3);
        QCOMPARE(back->history[2].state, RunState::Running);
        QCOMPARE(back->offsets.value(QStringLiteral("metrics.jsonl")), 12345678901LL);
        QVERIFY(!QFile::exists(QDir(m_dir.path()).filePath(QStringLiteral("x"))));
        const auto rows = (*store)->list();
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0].id, r.id);
        QCOMPARE(rows[0].state, RunState::Running);
        QCOMPARE(rows[0].strategy, QStringLiteral("fused"));
        QCOMPARE(rows[0].nodes, 2);
        QCOMPARE(rows[0].ranksPerNode, 4);
        QCOMPARE((*store)->activeRunIds(), QStringList{r.id});
    }

    // A poll's bookkeeping: offsets that only moved are not written at all (a mirror resumes from
    // its local file's size); a newly mirrored file is, whole, leaving no temporary file. A change
    // people see (the detail of a queued run) is written, read back and listed.
    void updatesOfTheMirrorsBookkeepingAndOfTheDetailPersist()
    {
        auto store = RunStore::open(ws());
        QVERIFY(store);
        const RunRecord r = makeRun(QStringLiteral("u1"), RunState::Queued, QStringLiteral("s"));
        QVERIFY((*store)->save(r));
        const QString json = (*store)->workspace().runDir(r.id) + QStringLiteral("/run.json");
        const auto readJson = [&json] {
            QFile f(json);
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        };
        const QByteArray before = readJson();
        const qint64 old = r.offsets.value(QStringLiteral("metrics.jsonl"));
        auto up = (*store)->update(r.id, [](RunRecord& x) {
            x.offsets[QStringLiteral("metrics.jsonl")] += 99;
            return Status(Done{});
        });
        QVERIFY(up);
        QCOMPARE(up->offsets.value(QStringLiteral("metrics.jsonl")), old + 99);  // the caller's record has it
        QCOMPARE(readJson(), before);                                            // the file is untouched
        up = (*store)->update(r.id, [](RunRecord& x) {
            x.offsets[QStringLiteral("out.log")] = 7;
            return Status(Done{});
        });
        QVERIFY(up);
        QCOMPARE((*store)->load(r.id)->offsets.value(QStringLiteral("out.log")), 7LL);
        // No temporary file is left; the run's lock file stays (flock on it, docs/design.md).
        QCOMPARE(QDir((*store)->workspace().runDir(r.id)).entryList(QDir::Files | QDir::Hidden),
                 (QStringList{QStringLiteral(".lock"), QStringLiteral("run.json")}));
        up = (*store)->update(r.id, [](RunRecord& x) {
            x.message = QStringLiteral("slurm: PENDING (Resources)");
            return Status(Done{});
        });
        QVERIFY(up);
        QCOMPARE((*store)->load(r.id)->message, QStringLiteral("slurm: PENDING (Resources)"));
        QCOMPARE((*store)->list().value(0).message, QStringLiteral("slurm: PENDING (Resources)"));
    }

    // Another process holds the index's write lock past the busy timeout while a run changes state:
    // run.json is written and the update stands, and the row, which later updates would not touch
    // (they move only offsets), is copied from run.json by the next list(), here and in other stores.
    void aRowTheIndexRefusedIsRepairedByTheNextList()
    {
        auto store = RunStore::open(ws());
        QVERIFY(store);
        QVERIFY((*store)->create(makeRun(QStringLiteral("busy"), RunState::Queued)));
        {
            QSqlDatabase other = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("blocker"));
            other.setDatabaseName((*store)->workspace().indexPath());
            QVERIFY(other.open());
            QSqlQuery q(other);
            QVERIFY(q.exec(QStringLiteral("BEGIN EXCLUSIVE")));
            auto up = (*store)->update(QStringLiteral("busy"), [](RunRecord& x) {
                x.transition(RunState::Running, QStringLiteral("started"));
                return Status(Done{});
            });
            QVERIFY2(up, qPrintable(up ? QString() : up.error().text()));
            QVERIFY(QFile::exists((*store)->workspace().indexPath() + QStringLiteral(".stale")));
            QVERIFY(q.exec(QStringLiteral("ROLLBACK")));
            other.close();
        }
        QSqlDatabase::removeDatabase(QStringLiteral("blocker"));
        auto up = (*store)->update(QStringLiteral("busy"), [](RunRecord& x) {
            x.offsets[QStringLiteral("metrics.jsonl")] = 7;
            return Status(Done{});
        });
        QVERIFY(up);
        auto second = RunStore::open(ws());  // another process's view, before this one lists
        QVERIFY(second);
        QCOMPARE((*second)->list().value(0).state, RunState::Running);
        QCOMPARE((*second)->activeRunIds(), QStringList{QStringLiteral("busy")});
        QCOMPARE((*store)->list().value(0).state, RunState::Running);
        QVERIFY(!QFile::exists((*store)->workspace().indexPath() + QStringLiteral(".stale")));
    }

    void listFiltersBySweepAndActiveRuns()
    {
        auto store = RunStore::open(ws());
        QVERIFY(store);
        QVERIFY((*store)->save(makeRun(QStringLiteral("s1-a"), RunState::Completed, QStringLiteral("s1"))));
        QVERIFY((*store)->save(makeRun(QStringLiteral("s1-b"), RunState::Queued, QStringLiteral("s1"))));
        QVERIFY((*store)->save(makeRun(QStringLiteral("s2-a"), RunState::Requeued, QStringLiteral("s2"))));
        QCOMPARE((*store)->list(QStringLiteral("s1")).size(), 2);
        QCOMPARE((*store)->list(QStringLiteral("s2")).size(), 1);
        QStringList active = (*store)->activeRunIds();
        active.sort();
        QCOMPARE(active, (QStringList{QStringLiteral("s1-b"), QStringLiteral("s2-a")}));
    }

    void indexRebuiltWhenMissing()
    {
        {
            auto store = RunStore::open(ws());
            QVERIFY((*store)->save(makeRun(QStringLiteral("r1"), RunState::Completed)));
            QVERIFY((*store)->save(makeRun(QStringLiteral("r2"), RunState::Failed)));
        }
        QVERIFY(QFile::remove(ws().indexPath()));
        auto store = RunStore::open(ws());
        QVERIFY(store);
        QVERIFY((*store)->wasRebuilt());
        QCOMPARE((*store)->rebuildReason(), QStringLiteral("there was no index"));
        QCOMPARE((*store)->list().size(), 2);
    }

    void indexRebuiltWhenCorrupt_data()
    {
        QTest::addColumn<QByteArray>("garbage");
        QTest::newRow("not a database") << QByteArray("this is not sqlite at all\n").repeated(100);
        QTest::newRow("truncated header") << QByteArray("SQLite format 3\0", 16) + QByteArray(100, '\xff');
        QTest::newRow("empty") << QByteArray();
    }
    void indexRebuiltWhenCorrupt()
    {
        QFETCH(QByteArray, garbage);
        {
            auto store = RunStore::open(ws());
            QVERIFY((*store)->save(makeRun(QStringLiteral("r1"), RunState::Completed)));
        }
        QFile f(ws().indexPath());
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(garbage);
        f.close();
        auto store = RunStore::open(ws());
        QVERIFY2(store, qPrintable(store ? QString() : store.error().text()));
        QVERIFY((*store)->wasRebuilt());
        QCOMPARE((*store)->list().size(), 1);
        QCOMPARE((*store)->list()[0].state, RunState::Completed);
    }

    void brokenRunJsonIsReportedNotFatal()
    {
        {
            auto store = RunStore::open(ws());
            QVERIFY((*store)->save(makeRun(QStringLiteral("good"), RunState::Completed)));
        }
        QDir().mkpath(ws().runDir(QStringLiteral("bad")));
        QFile f(ws().runDir(QStringLiteral("bad")) + QStringLiteral("/run.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"id\": \"bad\", \"state\": \"runn");  // cut mid-write by something else
        f.close();
        QFile::remove(ws().indexPath());
        auto store = RunStore::open(ws());
        QVERIFY(store);
        QCOMPARE((*store)->list().size(), 1);
        QCOMPARE((*store)->warnings().size(), 1);
        QVERIFY2((*store)->warnings()[0].contains(QStringLiteral("bad/run.json")), qPrintable((*store)->warnings()[0]));
        auto bad = (*store)->load(QStringLiteral("bad"));
        QVERIFY(!bad);
        QCOMPARE(bad.error().code, ErrorCode::RunCorrupt);
    }

    // Offsets and mtimes are whole numbers a JSON double holds exactly (found by fuzz_run_record:
    // 1.7e102 was cast to qint64, undefined behaviour).
    void outOfRangeOffsetsAreRefusedWithTheField_data()
    {
        QTest::addColumn<QByteArray>("field");
        QTest::newRow("huge offset") << QByteArray("\"offsets\": {\"metrics.jsonl\": 1.7e102}");
        QTest::newRow("negative offset") << QByteArray("\"offsets\": {\"metrics.jsonl\": -1}");
        QTest::newRow("fractional mtime") << QByteArray("\"mtimes\": {\"manifest.json\": 1.5}");
        QTest::newRow("string offset") << QByteArray("\"offsets\": {\"out.log\": \"12\"}");
    }
    void outOfRangeOffsetsAreRefusedWithTheField()
    {
        QFETCH(QByteArray, field);
        QDir().mkpath(ws().runDir(QStringLiteral("odd")));
        QFile f(ws().runDir(QStringLiteral("odd")) + QStringLiteral("/run.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"schema\": 1, \"id\": \"odd\", \"state\": \"running\", " + field + "}");
        f.close();
        auto store = RunStore::open(ws());
        QVERIFY(store);
        auto odd = (*store)->load(QStringLiteral("odd"));
        QVERIFY(!odd);
        QCOMPARE(odd.error().code, ErrorCode::RunCorrupt);
        const QString name = QString::fromLatin1(field.mid(1, field.indexOf('"', 1) - 1));
        QVERIFY2(odd.error().text().contains(QStringLiteral("field '%1'").arg(name)), qPrintable(odd.error().text()));
        f.remove();
    }

    void invalidRunIdsAreRefused_data()
    {
        QTest::addColumn<QString>("id");
        QTest::newRow("empty") << QString();
        QTest::newRow("slash") << QStringLiteral("a/b");
        QTest::newRow("dotdot") << QStringLiteral("..");
        QTest::newRow("newline") << QStringLiteral("a\nb");
        QTest::newRow("too long") << QString(201, QLatin1Char('x'));
    }
    void invalidRunIdsAreRefused()
    {
        QFETCH(QString, id);
        auto store = RunStore::open(ws());
        RunRecord r = makeRun(QStringLiteral("x"), RunState::Queued);
        r.id = id;
        const auto ok = (*store)->save(r);
        QVERIFY(!ok);
        QCOMPARE(ok.error().code, ErrorCode::RunId);
        QCOMPARE(QDir(ws().runsDir()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList());
    }

    void stateNamesRoundTrip()
    {
        for (int i = int(RunState::Draft); i <= int(RunState::Lost); ++i) {
            RunState back = RunState::Draft;
            QVERIFY(runStateFromName(runStateName(RunState(i)), &back));
            QCOMPARE(int(back), i);
        }
        RunState s;
        QVERIFY(!runStateFromName(QStringLiteral("exploded"), &s));
    }
};

QTEST_GUILESS_MAIN(TestRunStore)
#include "tst_runstore.moc"
