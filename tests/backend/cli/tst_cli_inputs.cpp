// Every input checked before anything runs (issue 37): option values, profile keys and the whole
// config, each refused with one clear line by the same rules whatever the path (submit, --dry-run,
// calibrate), nothing recorded.
#include "clitest.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <utility>

using namespace scaledesk::test;

class TestCliInputs : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;
    Cli m_cli;

    QString write(const QString& name, const QByteArray& text)
    {
        const QString path = m_tmp.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly) || f.write(text) != text.size()) qFatal("cannot write %s", qPrintable(path));
        return path;
    }
    int runCount() const
    {
        const auto list = m_cli.run({QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--json")});
        return int(QJsonDocument::fromJson(list.out.toUtf8()).array().size());
    }
    CliResult submit(const QStringList& more) const
    {
        return m_cli.run(
            QStringList{QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-tiny"), QStringLiteral("--make-data")} +
            more);
    }

private slots:
    void initTestCase()
    {
        m_cli.workspace = m_tmp.filePath(QStringLiteral("ws"));
        m_cli.env.insert(QStringLiteral("SCALEDESK_TRAIN"), QStringLiteral(SCALEDESK_TRAIN_BIN));
        // A cluster with 4 GPUs per node. Nothing here connects to it: every check runs first.
        const QString gpu = write(QStringLiteral("gpu4.yaml"),
                                  "kind: ssh+slurm\nhost: gpu.invalid\nremote_root: /r\n"
                                  "slurm:\n  gpus_per_node: 4\ntrainer: {path: /t}\n");
        const auto add = m_cli.run({QStringLiteral("profiles"), QStringLiteral("add"), gpu});
        QVERIFY2(add.exitCode == 0, qPrintable(add.all()));
    }

    // One rank per GPU by default; more ranks than GPUs refused, with both numbers, in submit,
    // its dry run and calibrate.
    void aGpuProfileRunsOneRankPerGpu()
    {
        const int runs = runCount();
        const auto dry = submit({QStringLiteral("--profile"), QStringLiteral("gpu4"), QStringLiteral("--name"), QStringLiteral("g"),
                                 QStringLiteral("--local-batch"), QStringLiteral("1"), QStringLiteral("--dry-run")});
        QVERIFY2(dry.exitCode == 0, qPrintable(dry.all()));
        QVERIFY2(dry.out.contains(QStringLiteral("#SBATCH --ntasks-per-node=4\n")), qPrintable(dry.out));
        QVERIFY2(dry.out.contains(QStringLiteral("#SBATCH --gpus-per-node=4\n")), qPrintable(dry.out));
        for (const bool dryRun : {true, false}) {
            QStringList args{
                QStringLiteral("--profile"),        QStringLiteral("gpu4"), QStringLiteral("--name"),        QStringLiteral("g8"),
                QStringLiteral("--ranks-per-node"), QStringLiteral("8"),    QStringLiteral("--local-batch"), QStringLiteral("1")};
            if (dryRun) args << QStringLiteral("--dry-run");
            const auto r = submit(args);
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains(QStringLiteral("8 ranks on a node of profile gpu4, whose nodes have 4 GPU(s)")), qPrintable(r.err));
            QVERIFY2(!r.err.contains(QStringLiteral("gpu.invalid")), qPrintable(r.err));  // refused before connecting
        }
        const auto cal = m_cli.run({QStringLiteral("calibrate"), QStringLiteral("--profile"), QStringLiteral("gpu4"),
                                    QStringLiteral("--ranks-per-node"), QStringLiteral("8")});
        QCOMPARE(cal.exitCode, 1);
        QVERIFY2(cal.err.contains(QStringLiteral("whose nodes have 4 GPU(s)")), qPrintable(cal.err));
        QCOMPARE(runCount(), runs);
    }

    void badCountsAndListsAreUsageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("says");
        QTest::newRow("an empty list item") << QStringList{QStringLiteral("--sweep"), QStringLiteral("s"), QStringLiteral("--nodes"),
                                                           QStringLiteral("1,,2")}
                                            << QStringLiteral("--nodes '1,,2': an empty item");
        QTest::newRow("zero ranks") << QStringList{QStringLiteral("--sweep"), QStringLiteral("s"), QStringLiteral("--ranks-per-node"),
                                                   QStringLiteral("0")}
                                    << QStringLiteral("ranks per node: 0 is not a positive count");
        QTest::newRow("negative ranks") << QStringList{QStringLiteral("--sweep"), QStringLiteral("s"),
                                                       QStringLiteral("--ranks-per-node=-1")}
                                        << QStringLiteral("ranks per node: -1 is not a positive count");
        QTest::newRow("no repetitions") << QStringList{QStringLiteral("--name"), QStringLiteral("one"), QStringLiteral("--repetitions"),
                                                       QStringLiteral("0")}
                                        << QStringLiteral("repetitions: must be at least 1");
        QTest::newRow("repetitions without a sweep")
            << QStringList{QStringLiteral("--name"), QStringLiteral("one"), QStringLiteral("--repetitions"), QStringLiteral("3")}
            << QStringLiteral("without --sweep NAME a submit is one run");
        QTest::newRow("a list without a sweep")
            << QStringList{QStringLiteral("--name"), QStringLiteral("one"), QStringLiteral("--ranks-per-node"), QStringLiteral("1,2")}
            << QStringLiteral("give 1 x 2 x 1 x 1 runs");
        QTest::newRow("a word for a count") << QStringList{QStringLiteral("--sweep"), QStringLiteral("s"), QStringLiteral("--nodes"),
                                                           QStringLiteral("two")}
                                            << QStringLiteral("--nodes takes comma-separated whole numbers, not 'two'");
        QTest::newRow("a clock that is not one")
            << QStringList{QStringLiteral("--name"), QStringLiteral("one"), QStringLiteral("--time"), QStringLiteral("99:99:99")}
            << QStringLiteral("not a SLURM time limit: 99:99:99");
    }
    void badCountsAndListsAreUsageErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, says);
        const int runs = runCount();
        for (const bool dryRun : {false, true}) {
            const auto r = submit(dryRun ? args + QStringList{QStringLiteral("--dry-run")} : args);
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains(says), qPrintable(r.err));
        }
        QCOMPARE(runCount(), runs);
    }

    // plan's and calibrate's number options: one line naming the rule (CLI11's own checks print a
    // 309-digit range), a usage error, and nothing recorded.
    void numberOptionsNameTheirRule_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("says");
        QTest::newRow("plan: a word") << QStringList{QStringLiteral("plan"), QStringLiteral("--ranks-per-node"), QStringLiteral("two")}
                                      << QStringLiteral("--ranks-per-node: 'two' is not a number");
        QTest::newRow("plan: zero") << QStringList{QStringLiteral("plan"), QStringLiteral("--ranks-per-node"), QStringLiteral("0")}
                                    << QStringLiteral("--ranks-per-node: must be greater than 0, got 0");
        QTest::newRow("calibrate: a word") << QStringList{QStringLiteral("calibrate"), QStringLiteral("--reps"), QStringLiteral("ten")}
                                           << QStringLiteral("--reps: 'ten' is not a number");
        QTest::newRow("calibrate: negative") << QStringList{QStringLiteral("calibrate"), QStringLiteral("--after-compute=-1")}
                                             << QStringLiteral("--after-compute: must be 0 or greater, got -1");
    }
    void numberOptionsNameTheirRule()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, says);
        const int runs = runCount();
        const auto r = m_cli.run(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(says), qPrintable(r.err));
        QVERIFY2(!r.err.contains(QStringLiteral("1797693")), qPrintable(r.err));
        QCOMPARE(runCount(), runs);
    }

    // A dry run is refused where the submit is: an id that exists, data that no run would find.
    void aDryRunRunsEveryCheckOfTheSubmit()
    {
        QVERIFY(QDir().mkpath(m_cli.workspace + QStringLiteral("/runs/taken")));
        QFile rec(m_cli.workspace + QStringLiteral("/runs/taken/run.json"));
        QVERIFY(rec.open(QIODevice::WriteOnly));
        rec.write(R"({"id":"taken","state":"completed","profile":"local","history":[]})");
        rec.close();
        const auto taken = submit({QStringLiteral("--name"), QStringLiteral("taken"), QStringLiteral("--dry-run")});
        QCOMPARE(taken.exitCode, 1);
        QVERIFY2(taken.err.contains(QStringLiteral("exist already")), qPrintable(taken.err));
        const auto noData = m_cli.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-tiny"),
                                       QStringLiteral("--name"), QStringLiteral("nodata"), QStringLiteral("--dry-run")});
        QCOMPARE(noData.exitCode, 1);
        QVERIFY2(noData.err.contains(QStringLiteral("train_path 'data/train.h5' (config cpu-tiny)")), qPrintable(noData.err));
        QVERIFY(!QDir(m_cli.workspace + QStringLiteral("/runs/nodata")).exists());
    }

    // A type error deep in a config: the trainer's own rules refuse it, with its file:line:col,
    // before anything is recorded (the submit and its dry run alike).
    void aConfigWithATypeErrorIsRefusedBeforeAnythingIsRecorded()
    {
        const int runs = runCount();
        QFile shipped(QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
        QVERIFY(shipped.open(QIODevice::ReadOnly));
        QByteArray text = shipped.readAll();
        const int line = int(text.count('\n')) + 4;  // the line of Nsamples below (after an empty line and two more)
        text += "\ntypo:\n  <<: *cpu\n  Nsamples: many\n  global_batch_size: 2\n";
        const QString file = write(QStringLiteral("typo.yaml"), text);
        for (const bool dryRun : {false, true}) {
            QStringList args{QStringLiteral("submit"),   QStringLiteral("--config-file"), file,
                             QStringLiteral("--config"), QStringLiteral("typo"),          QStringLiteral("--make-data"),
                             QStringLiteral("--name"),   QStringLiteral("typo")};
            if (dryRun) args << QStringLiteral("--dry-run");
            const auto r = m_cli.run(args);
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains(QStringLiteral("%1:%2:").arg(file).arg(line)), qPrintable(r.err));
            QVERIFY2(r.err.contains(QStringLiteral("Nsamples")), qPrintable(r.err));
            QVERIFY(!QDir(m_cli.workspace + QStringLiteral("/runs/typo")).exists());
        }
        // A batch that is not a number: named with its line, not "the config has none".
        QByteArray batch = text;
        batch.replace("  global_batch_size: 2\n", "  global_batch_size: lots\n");
        const QString batchFile = write(QStringLiteral("batch.yaml"), batch);
        const auto b = m_cli.run({QStringLiteral("submit"), QStringLiteral("--config-file"), batchFile, QStringLiteral("--config"),
                                  QStringLiteral("typo"), QStringLiteral("--make-data"), QStringLiteral("--sweep"), QStringLiteral("b")});
        QCOMPARE(b.exitCode, 1);
        QVERIFY2(b.err.contains(QStringLiteral("%1:%2: key 'global_batch_size' of config 'typo': 'lots' is not a positive integer")
                                    .arg(batchFile)
                                    .arg(line + 1)),
                 qPrintable(b.err));
        QCOMPARE(runCount(), runs);
    }

    void aConfigFileThatIsNotThereIsSaidSo()
    {
        const auto r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--config-file"), QStringLiteral("/nonexistent.yaml"),
                                  QStringLiteral("--config"), QStringLiteral("cpu-tiny"), QStringLiteral("--name"), QStringLiteral("x")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(QStringLiteral("/nonexistent.yaml: no such file")), qPrintable(r.err));
        QVERIFY(!r.err.contains(QStringLiteral("bad file")));
    }

    // An answer that names nothing fails, before any work and without writing anything.
    void reportsAndPlansOfNothingFail()
    {
        const QString out = m_tmp.filePath(QStringLiteral("report-out"));
        const auto report =
            m_cli.run({QStringLiteral("report"), QStringLiteral("--sweep"), QStringLiteral("nosuch"), QStringLiteral("--out"), out});
        QCOMPARE(report.exitCode, 1);
        QVERIFY2(report.err.contains(QStringLiteral("no runs in sweep 'nosuch'")), qPrintable(report.err));
        QVERIFY(!QDir(out).exists());
        const auto docx = m_cli.run({QStringLiteral("report"), QStringLiteral("--sweep"), QStringLiteral("nosuch"), QStringLiteral("--out"),
                                     out, QStringLiteral("--format"), QStringLiteral("docx")});
        QCOMPARE(docx.exitCode, 2);
        QVERIFY2(docx.err.contains(QStringLiteral("unknown report format 'docx'")), qPrintable(docx.err));
        const auto plan =
            m_cli.run({QStringLiteral("plan"), QStringLiteral("--sweep"), QStringLiteral("nosuch"), QStringLiteral("--nodes"),
                       QStringLiteral("1"), QStringLiteral("--out"), out, QStringLiteral("--format"), QStringLiteral("docx")});
        QCOMPARE(plan.exitCode, 2);
        QVERIFY2(plan.err.contains(QStringLiteral("unknown plan format 'docx'")), qPrintable(plan.err));
        QVERIFY2(!plan.all().contains(QStringLiteral("no runs")), qPrintable(plan.all()));  // the format first, not after the work
        QVERIFY(!QDir(out).exists());
    }

    // A run record that cannot be read fails `status`; a rank the run does not have fails `tail`.
    void unreadableRecordsAndMissingRanksAreErrors()
    {
        Cli other = m_cli;
        other.workspace = m_tmp.filePath(QStringLiteral("ws-records"));
        for (const auto& [id, json] : {std::pair{QStringLiteral("two-ranks"),
                                                 QByteArray(R"({"id":"two-ranks","state":"completed",)"
                                                            R"("profile":"local","nodes":1,"ranks_per_node":2,"history":[]})")},
                                       std::pair{QStringLiteral("corrupt"), QByteArray("{\"id\": \"corrupt\", ")}}) {
            QVERIFY(QDir().mkpath(other.workspace + QStringLiteral("/runs/") + id));
            QFile f(other.workspace + QStringLiteral("/runs/") + id + QStringLiteral("/run.json"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(json);
        }
        const auto tail = other.run({QStringLiteral("tail"), QStringLiteral("two-ranks"), QStringLiteral("--rank"), QStringLiteral("5")});
        QCOMPARE(tail.exitCode, 2);
        QVERIFY2(tail.err.contains(QStringLiteral("--rank 5: the run has 2 rank(s), 0 to 1")), qPrintable(tail.err));
        const auto status = other.run({QStringLiteral("status"), QStringLiteral("corrupt")});
        QCOMPARE(status.exitCode, 1);
        QVERIFY2(status.err.contains(QStringLiteral("corrupt")), qPrintable(status.err));
    }

    // One config source: the command line reads the workspace's configs/unet.yaml, the file the
    // window's editor edits (seeded from the shipped one on first use).
    void theCommandLineReadsTheWorkspacesConfigs()
    {
        Cli fresh = m_cli;
        fresh.workspace = m_tmp.filePath(QStringLiteral("ws-configs"));
        const QString configs = fresh.workspace + QStringLiteral("/configs/unet.yaml");
        const auto first =
            fresh.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("cpu-tiny"), QStringLiteral("--make-data"),
                       QStringLiteral("--name"), QStringLiteral("a"), QStringLiteral("--dry-run")});
        QVERIFY2(first.exitCode == 0, qPrintable(first.all()));
        QVERIFY(QFile::exists(configs));
        QFile shipped(QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
        QVERIFY(shipped.open(QIODevice::ReadOnly));
        QFile copy(configs);
        QVERIFY(copy.open(QIODevice::ReadWrite));
        QCOMPARE(copy.readAll(), shipped.readAll());
        // An edit there (as the window's editor makes it) is what the next submit launches.
        copy.write("\nmine:\n  <<: *cpu\n  base_channels: 4\n  global_batch_size: 2\n  base_batch_size: 2\n  Nsamples: 16\n"
                   "  Nsamples_val: 8\n  num_epochs: 3\n");
        copy.close();
        const auto mine =
            fresh.run({QStringLiteral("submit"), QStringLiteral("--config"), QStringLiteral("mine"), QStringLiteral("--make-data"),
                       QStringLiteral("--name"), QStringLiteral("b"), QStringLiteral("--dry-run")});
        QVERIFY2(mine.exitCode == 0, qPrintable(mine.all()));
        QVERIFY2(mine.out.contains(QStringLiteral("'--config' 'mine'")), qPrintable(mine.out));
    }

    // Ctrl-C during a deploy stops its build there (it runs detached, in its own process group),
    // and the command exits 130, instead of leaving a multi-minute build behind.
    void ctrlCDuringADeployStopsItsBuild()
    {
        // Sources whose "build" is a CMake configure that sleeps, marked so that it can be found.
        const QString sources = m_tmp.filePath(QStringLiteral("slow-sources"));
        QVERIFY(QDir().mkpath(sources));
        QFile cmake(sources + QStringLiteral("/CMakeLists.txt"));
        QVERIFY(cmake.open(QIODevice::WriteOnly));
        cmake.write("cmake_minimum_required(VERSION 3.16)\nproject(slow NONE)\nexecute_process(COMMAND sleep 117.25)\n");
        cmake.close();
        for (const QString& other : {QStringLiteral("configs/unet.yaml"), QStringLiteral("trainer/CMakeLists.txt")}) {
            QVERIFY(QDir().mkpath(QFileInfo(sources + QLatin1Char('/') + other).absolutePath()));
            QFile f(sources + QLatin1Char('/') + other);
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        QProcess deploy;
        deploy.setProcessEnvironment(m_cli.env);
        deploy.start(QStringLiteral(SCALEDESK_CLI),
                     {QStringLiteral("--workspace"), m_cli.workspace, QStringLiteral("deploy"), QStringLiteral("--profile"),
                      QStringLiteral("local"), QStringLiteral("--sources"), sources});
        QVERIFY(deploy.waitForStarted());
        auto sleeping = [] {
            QProcess pgrep;
            pgrep.start(QStringLiteral("pgrep"), {QStringLiteral("-f"), QStringLiteral("sleep 117.25")});
            pgrep.waitForFinished();
            return pgrep.exitCode() == 0;
        };
        QTRY_VERIFY_WITH_TIMEOUT(sleeping(), 60000);  // the build is running there
        ::kill(pid_t(deploy.processId()), SIGINT);
        QVERIFY(deploy.waitForFinished(30000));
        const QString err = QString::fromUtf8(deploy.readAllStandardError());
        QCOMPARE(deploy.exitCode(), 130);
        QVERIFY2(err.contains(QStringLiteral("deploy stopped (Ctrl-C)")) && err.contains(QStringLiteral("build there was stopped")),
                 qPrintable(err));
        QTRY_VERIFY_WITH_TIMEOUT(!sleeping(), 10000);  // and the build's processes are gone
    }

    // A profile's `name` key is its name; a --name that contradicts it is refused.
    void aProfileIsAddedUnderTheNameItGivesItself()
    {
        const QString file = write(QStringLiteral("gpu.yaml"),
                                   "name: gpucluster\nkind: ssh+slurm\nhost: h.invalid\nremote_root: /r\n"
                                   "trainer: {path: /t}\n");
        const auto clash =
            m_cli.run({QStringLiteral("profiles"), QStringLiteral("add"), QStringLiteral("--name"), QStringLiteral("other"), file});
        QCOMPARE(clash.exitCode, 1);
        QVERIFY2(clash.err.contains(QStringLiteral("the file names its profile 'gpucluster' (key `name`)")), qPrintable(clash.err));
        QVERIFY(!QFile::exists(m_cli.workspace + QStringLiteral("/profiles/other.yaml")));
        const auto add = m_cli.run({QStringLiteral("profiles"), QStringLiteral("add"), file});
        QVERIFY2(add.exitCode == 0, qPrintable(add.all()));
        const auto dry = submit({QStringLiteral("--profile"), QStringLiteral("gpucluster"), QStringLiteral("--name"), QStringLiteral("n"),
                                 QStringLiteral("--dry-run")});
        QVERIFY2(dry.exitCode == 0, qPrintable(dry.all()));
        QVERIFY(!QFile::exists(m_cli.workspace + QStringLiteral("/profiles/gpu.yaml")));
    }

    // A weak sweep launched in two parts: the second submit (larger points only) goes on at the
    // first part's per-rank batch and says so, instead of recomputing it from its own smallest
    // point (which would be strong scaling under a weak label).
    void aSweepLaunchedInPartsKeepsItsLocalBatch()
    {
        const auto first = submit({QStringLiteral("--sweep"), QStringLiteral("split"), QStringLiteral("--strategies"),
                                   QStringLiteral("ddp"), QStringLiteral("--ranks-per-node"), QStringLiteral("1"), QStringLiteral("--wait"),
                                   QStringLiteral("--timeout"), QStringLiteral("300")});
        QVERIFY2(first.exitCode == 0, qPrintable(first.all()));
        const QStringList second{
            QStringLiteral("--sweep"),          QStringLiteral("split"), QStringLiteral("--strategies"), QStringLiteral("ddp"),
            QStringLiteral("--ranks-per-node"), QStringLiteral("2"),     QStringLiteral("--dry-run")};
        const auto dry = submit(second);
        QVERIFY2(dry.exitCode == 0, qPrintable(dry.all()));
        // cpu-tiny's global_batch_size is 2: 2 per rank from the 1-rank point on (alone, the 2-rank point would get 1).
        QVERIFY2(dry.err.contains(QStringLiteral("sweep split goes on at local batch 2, as its runs so far (weak scaling)")),
                 qPrintable(dry.err));
        QVERIFY2(dry.out.contains(QStringLiteral("'--local_batch_size' '2'")), qPrintable(dry.out));
        const auto mixed = submit(second + QStringList{QStringLiteral("--local-batch"), QStringLiteral("1")});
        QVERIFY2(mixed.exitCode == 0, qPrintable(mixed.all()));
        QVERIFY2(mixed.err.contains(QStringLiteral("sweep split's runs so far train at local batch 2, these at 1")), qPrintable(mixed.err));
    }
};

QTEST_GUILESS_MAIN(TestCliInputs)
#include "tst_cli_inputs.moc"
