// The `scaledesk` command line against the test sandbox: a real sshd (key auth, host keys) and a
// real SLURM (sbatch, squeue, scancel, requeue), the trainer deployed over SFTP, 2-rank jobs under
// srun --mpi=pmix. Everything goes through one SSH session per command, as on a real cluster.
#include "analysis/epochscsv.h"
#include "clitest.h"
#include "eventfile.h"
#include "runs/importer.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTemporaryDir>

using namespace scaledesk::test;

namespace {
QString sandboxDir()
{
    const QString d = qEnvironmentVariable("SCALEDESK_SSH_SANDBOX_DIR");
    return d.isEmpty() ? QStringLiteral("/tmp/scaledesk-ssh-sandbox") : d;
}
QString runLocal(const QString& program, const QStringList& args)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    p.waitForFinished(60000);
    return QString::fromUtf8(p.readAll()).trimmed();
}
}  // namespace

class TestCliSandbox : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;
    Cli m_cli;
    QString m_remoteRoot;

    QString writeProfile(const QString& name, const QString& extra, const QString& knownHosts = QString(),
                         const QString& slurmExtra = QString())
    {
        const QString path = m_tmp.filePath(name + QStringLiteral(".yaml"));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly)) return QString();
        const QString kh = knownHosts.isEmpty() ? m_tmp.filePath(QStringLiteral("known_hosts")) : knownHosts;
        f.write(QStringLiteral("kind: ssh+slurm\n"
                               "host: sandbox\n"
                               "known_hosts: \"%1\"\n"
                               "remote_root: \"%2\"\n"
                               "master_port: 29650\n"
                               "slurm:\n"
                               "  cpus_per_task: 1\n"
                               "  time_limit: \"00:10:00\"\n"
                               "  mpi: pmix\n"
                               "  requeue: true\n"
                               "  signal_seconds: 0\n"
                               "%3"
                               "trainer:\n"
                               "  deploy: true\n"
                               "  prebuilt: true\n")
                    .arg(kh, m_remoteRoot, slurmExtra)
                    .toUtf8() +
                extra.toUtf8());
        f.close();
        return path;
    }
    QStringList submitArgs(const QString& profile, const QString& config, const QStringList& more)
    {
        return QStringList{QStringLiteral("submit"),     QStringLiteral("--profile"), profile, QStringLiteral("--config"), config,
                           QStringLiteral("--make-data")} +
            more;
    }

private slots:
    void initTestCase()
    {
        QVERIFY2(QFileInfo::exists(sandboxDir() + QStringLiteral("/ssh_config")), "the SSH sandbox is not running");
        QVERIFY2(!qEnvironmentVariableIsEmpty("SLURM_CONF"), "the SLURM sandbox is not configured");
        if (qEnvironmentVariableIsSet("SCALEDESK_KEEP_TEST_DIRS")) m_tmp.setAutoRemove(false);
        m_cli.workspace = m_tmp.filePath(QStringLiteral("ws"));
        m_remoteRoot = m_tmp.filePath(QStringLiteral("remote root 'q' $(touch pwned-root); ü"));
        m_cli.env.insert(QStringLiteral("SCALEDESK_SSH_CONFIG"), sandboxDir() + QStringLiteral("/ssh_config"));
        m_cli.env.insert(QStringLiteral("SCALEDESK_TRAIN"), QStringLiteral(SCALEDESK_TRAIN_BIN));
        m_cli.env.remove(QStringLiteral("SSH_AUTH_SOCK"));
        QVERIFY(QFile::copy(sandboxDir() + QStringLiteral("/known_hosts"), m_tmp.filePath(QStringLiteral("known_hosts"))));
        const auto add = m_cli.run({QStringLiteral("profiles"), QStringLiteral("add"), writeProfile(QStringLiteral("sb"), QString())});
        QVERIFY2(add.exitCode == 0, qPrintable(add.all()));
    }

    // Whatever a failed test left running is cancelled, so the next test finds the node free.
    void cleanupTestCase()
    {
        const auto list = m_cli.run({QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--json")});
        for (const auto& row : QJsonDocument::fromJson(list.out.toUtf8()).array()) {
            const QString state = row.toObject().value(QStringLiteral("state")).toString();
            const QString job = row.toObject().value(QStringLiteral("job_id")).toString();
            if (!job.isEmpty() &&
                (state == QLatin1String("queued") || state == QLatin1String("running") || state == QLatin1String("requeued")))
                runLocal(QStringLiteral("scancel"), {job});
        }
    }

    void deployUploadsOnceThenReuses()
    {
        const auto first = m_cli.run({QStringLiteral("deploy"), QStringLiteral("--profile"), QStringLiteral("sb")});
        QVERIFY2(first.exitCode == 0, qPrintable(first.all()));
        QVERIFY2(first.out.contains(QStringLiteral(" deployed: ")), qPrintable(first.out));
        const auto again = m_cli.run({QStringLiteral("deploy"), QStringLiteral("--profile"), QStringLiteral("sb")});
        QVERIFY2(again.exitCode == 0 && again.out.contains(QStringLiteral(" reused: ")), qPrintable(again.all()));
        const QString path = again.out.section(QStringLiteral(" reused: "), 1).trimmed();
        QVERIFY2(QFileInfo(path).isExecutable() && path.startsWith(m_remoteRoot + QStringLiteral("/trainer/bin-")), qPrintable(path));
    }

    // Deploy from sources: a stand-in source tree with the trainer's layout (a C program, so the
    // test does not spend minutes compiling libtorch) is uploaded, built there with the profile's
    // setup lines, reused while its content hash is unchanged, and rebuilt when it changes.
    void deployBuildsSourcesThereAndReusesThem()
    {
        const QString src = m_tmp.filePath(QStringLiteral("src tree"));
        QDir().mkpath(src + QStringLiteral("/trainer"));
        auto write = [&](const QString& rel, const QByteArray& text) {
            QFile f(src + QLatin1Char('/') + rel);
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write(text);
        };
        write(QStringLiteral("CMakeLists.txt"), "cmake_minimum_required(VERSION 3.16)\nproject(stand_in C)\nadd_subdirectory(trainer)\n");
        write(QStringLiteral("trainer/CMakeLists.txt"), "add_executable(scaledesk-train main.c)\n");
        write(QStringLiteral("trainer/main.c"), "#include <stdio.h>\nint main(void) { puts(\"stand-in 1\"); return 0; }\n");
        // CMake cannot build under a path with ';' (its list separator): a clear refusal...
        const auto refused =
            m_cli.run({QStringLiteral("deploy"), QStringLiteral("--profile"), QStringLiteral("sb"), QStringLiteral("--sources"), src});
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.err.contains(QStringLiteral("contains ';'")), qPrintable(refused.err));
        // ...so this profile keeps its (still hostile) remote root free of ';'.
        const QString semicolonRoot = m_remoteRoot;
        m_remoteRoot = m_tmp.filePath(QStringLiteral("build root 'q' $(touch pwned-build) ü"));
        const auto add = m_cli.run({QStringLiteral("profiles"), QStringLiteral("add"), QStringLiteral("--name"), QStringLiteral("build"),
                                    writeProfile(QStringLiteral("build"), QStringLiteral("setup: \"touch setup-ran\"\n"))});
        m_remoteRoot = semicolonRoot;
        QVERIFY2(add.exitCode == 0, qPrintable(add.all()));
        // The profile says prebuilt; --sources asks for a build from sources.
        const QStringList deploy = {QStringLiteral("deploy"), QStringLiteral("--profile"), QStringLiteral("build"),
                                    QStringLiteral("--sources"), src};
        const auto first = m_cli.run(deploy);
        QVERIFY2(first.exitCode == 0 && first.out.contains(QStringLiteral(" deployed: ")), qPrintable(first.all()));
        const QString trainer = first.out.section(QStringLiteral(" deployed: "), 1).trimmed();
        QVERIFY2(trainer.endsWith(QStringLiteral("/build/trainer/scaledesk-train")), qPrintable(trainer));
        const QString dir = trainer.section(QStringLiteral("/build/"), 0, 0);
        QVERIFY(QFile::exists(dir + QStringLiteral("/setup-ran")));  // the setup lines ran before CMake
        QVERIFY(QFile::exists(dir + QStringLiteral("/build.log")));
        QCOMPARE(runLocal(trainer, {}), QStringLiteral("stand-in 1"));
        const auto again = m_cli.run(deploy);
        QVERIFY2(again.exitCode == 0 && again.out.contains(QStringLiteral(" reused: ") + trainer), qPrintable(again.all()));
        write(QStringLiteral("trainer/main.c"), "#include <stdio.h>\nint main(void) { puts(\"stand-in 2\"); return 0; }\n");
        const auto changed = m_cli.run(deploy);
        QVERIFY2(changed.exitCode == 0 && changed.out.contains(QStringLiteral(" deployed: ")), qPrintable(changed.all()));
        const QString trainer2 = changed.out.section(QStringLiteral(" deployed: "), 1).trimmed();
        QVERIFY(trainer2 != trainer);
        QCOMPARE(runLocal(trainer2, {}), QStringLiteral("stand-in 2"));
        QFile current(dir.section(QStringLiteral("/trainer/"), 0, 0) + QStringLiteral("/trainer/current"));
        QVERIFY(current.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(current.readAll()).trimmed(), trainer2);
        current.close();
        // A source tree that does not compile: the error carries the end of build.log.
        write(QStringLiteral("trainer/main.c"), "this is not C\n");
        const auto broken = m_cli.run(deploy);
        QCOMPARE(broken.exitCode, 1);
        QVERIFY2(broken.err.contains(QStringLiteral("the trainer build failed")) && broken.err.contains(QStringLiteral("main.c")),
                 qPrintable(broken.err));
        // The last good deploy stays current.
        QVERIFY(current.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(current.readAll()).trimmed(), trainer2);
        current.close();
        QVERIFY(!QFile::exists(m_tmp.filePath(QStringLiteral("pwned-build"))));
    }

    // trainer.pytorch: the deploy asks the profile's interpreter for its libtorch's CMake prefix and
    // builds against it. The interpreter is a stand-in that answers as a PyTorch installation would,
    // with a prefix whose TorchConfig.cmake forwards to this machine's libtorch; the stand-in sources
    // print the Torch_DIR CMake found, so the build shows it used that prefix. Its setup lines run
    // first. An interpreter without torch fails the deploy with one line naming it.
    void deployBuildsAgainstTheProfilesPytorch()
    {
        const QString src = m_tmp.filePath(QStringLiteral("torch src"));
        QDir().mkpath(src + QStringLiteral("/trainer"));
        const QString prefix = m_tmp.filePath(QStringLiteral("fake-torch"));
        QDir().mkpath(prefix + QStringLiteral("/Torch"));
        auto write = [&](const QString& path, const QByteArray& text, bool exec = false) {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write(text);
            f.close();
            if (exec) f.setPermissions(f.permissions() | QFile::ExeOwner);
        };
        write(src + QStringLiteral("/CMakeLists.txt"),
              "cmake_minimum_required(VERSION 3.16)\nproject(stand_in C CXX)\nadd_subdirectory(trainer)\n");
        write(src + QStringLiteral("/trainer/CMakeLists.txt"),
              "find_package(Torch REQUIRED)\nadd_executable(scaledesk-train main.c)\n"
              "target_compile_definitions(scaledesk-train PRIVATE FOUND_AT=\"${Torch_DIR}\")\n");
        write(src + QStringLiteral("/trainer/main.c"), "#include <stdio.h>\nint main(void) { puts(FOUND_AT); return 0; }\n");
        write(prefix + QStringLiteral("/Torch/TorchConfig.cmake"), "include(/usr/lib/x86_64-linux-gnu/cmake/Torch/TorchConfig.cmake)\n");
        const QString python = m_tmp.filePath(QStringLiteral("stand-in-python"));
        write(python,
              "#!/bin/sh\n# A stand-in interpreter: answers what a deploy asks of a PyTorch installation.\n"
              "case \"$2\" in\n  *cmake_prefix_path*) echo '" +
                  prefix.toUtf8() +
                  "' ;;\n"
                  "  *__version__*) echo torch 2.6.0 CUDA 12.4 ;;\n  *) exit 1 ;;\nesac\n",
              true);
        const QString semicolonRoot = m_remoteRoot;
        m_remoteRoot = m_tmp.filePath(QStringLiteral("pytorch root"));
        const auto add = m_cli.run({QStringLiteral("profiles"), QStringLiteral("add"), QStringLiteral("--name"), QStringLiteral("pt"),
                                    writeProfile(QStringLiteral("pt"),
                                                 QStringLiteral("  pytorch:\n    setup: \"touch pytorch-setup-ran\"\n"
                                                                "    python: ") +
                                                     python + QLatin1Char('\n'))});
        QVERIFY2(add.exitCode == 0, qPrintable(add.all()));
        const auto noTorch = m_cli.run({QStringLiteral("profiles"), QStringLiteral("add"), QStringLiteral("--name"), QStringLiteral("nt"),
                                        writeProfile(QStringLiteral("nt"), QStringLiteral("  pytorch:\n    python: /bin/false\n"))});
        m_remoteRoot = semicolonRoot;
        QVERIFY2(noTorch.exitCode == 0, qPrintable(noTorch.all()));
        const auto r =
            m_cli.run({QStringLiteral("deploy"), QStringLiteral("--profile"), QStringLiteral("pt"), QStringLiteral("--sources"), src});
        QVERIFY2(r.exitCode == 0 && r.out.contains(QStringLiteral(" deployed: ")), qPrintable(r.all()));
        const QString trainer = r.out.section(QStringLiteral(" deployed: "), 1).trimmed();
        QCOMPARE(runLocal(trainer, {}), prefix + QStringLiteral("/Torch"));
        const QString dir = trainer.section(QStringLiteral("/build/"), 0, 0);
        QVERIFY(QFile::exists(dir + QStringLiteral("/pytorch-setup-ran")));
        QFile log(dir + QStringLiteral("/build.log"));
        QVERIFY(log.open(QIODevice::ReadOnly));
        QVERIFY(log.readAll().contains("scaledesk: building against torch 2.6.0 CUDA 12.4 at " + prefix.toUtf8()));
        const auto failed =
            m_cli.run({QStringLiteral("deploy"), QStringLiteral("--profile"), QStringLiteral("nt"), QStringLiteral("--sources"), src});
        QCOMPARE(failed.exitCode, 1);
        QVERIFY2(failed.err.contains(QStringLiteral("scaledesk: trainer.pytorch.python /bin/false cannot import torch")),
                 qPrintable(failed.err));
    }

    void profileTestChecksEverything()
    {
        const auto r = m_cli.run({QStringLiteral("profiles"), QStringLiteral("test"), QStringLiteral("sb")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QVERIFY2(r.out.contains(QStringLiteral("ok   connect to root@127.0.0.1:26822")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("ok   SLURM: slurm")), qPrintable(r.out));
        QVERIFY(r.out.contains(QStringLiteral("ok   remote root writable")));
        QVERIFY(r.out.contains(QStringLiteral("ok   trainer")));
        // The sandbox's trainer is this machine's CPU build, and its node has no GPU in its GRES.
        QVERIFY2(r.out.contains(QStringLiteral("ok   GPU build: CPU-only libtorch ")), qPrintable(r.out));
        QVERIFY2(r.out.contains(
                     QRegularExpression(QStringLiteral("ok   GPUs per node: 0 \\(partition [^,]+, GRES none\\); the profile asks for 0"))),
                 qPrintable(r.out));
    }

    void twoRankRunCompletesOverSsh()
    {
        const QString name = QStringLiteral("ssh tiny $(touch pwned); 'q' \"dq\" ü;");
        const auto r = m_cli.run(submitArgs(QStringLiteral("sb"), QStringLiteral("cpu-tiny"),
                                            {QStringLiteral("--name"), name, QStringLiteral("--ranks-per-node"), QStringLiteral("2"),
                                             QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("400")}));
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QCOMPARE(m_cli.state(name), QStringLiteral("completed"));
        const QStringList h = m_cli.history(name);
        QVERIFY2(h.contains(QStringLiteral("queued")) && h.contains(QStringLiteral("running")) && h.last() == QStringLiteral("completed"),
                 qPrintable(h.join(QLatin1Char(' '))));
        const QString jobId = m_cli.record(name).value(QStringLiteral("job_id")).toString();
        const QJsonObject m = m_cli.manifest(name);
        QCOMPARE(m.value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
        QCOMPARE(m.value(QStringLiteral("world_size")).toInt(), 2);
        QCOMPARE(m.value(QStringLiteral("slurm_job_id")).toString(), jobId);
        QVERIFY(m_cli.mirrored(name, QStringLiteral("slurm-") + jobId + QStringLiteral(".out")).contains("DONE ---- rank 0"));
        QVERIFY(!m_cli.mirrored(name, QStringLiteral("rank-1.log")).isEmpty());
        // `status` shows the states it went through.
        const auto st = m_cli.run({QStringLiteral("status"), name});
        QVERIFY2(st.out.contains(QStringLiteral("queued")) && st.out.contains(QStringLiteral("running")) &&
                     st.out.contains(QStringLiteral("slurm: COMPLETED")),
                 qPrintable(st.out));
        const QString remote = m_cli.record(name).value(QStringLiteral("remote_dir")).toString();
        QCOMPARE(remote, m_remoteRoot + QStringLiteral("/runs/") + name);
        for (const QString& dir : {remote, m_remoteRoot, m_tmp.path(), QDir::homePath(), QDir::currentPath()}) {
            QVERIFY2(!QFile::exists(dir + QStringLiteral("/pwned")), qPrintable(dir));
            QVERIFY2(!QFile::exists(dir + QStringLiteral("/pwned-root")), qPrintable(dir));
        }
    }

    // The user's own code over SSH: a PyTorch DDP script on 2 ranks under srun (env:// from SLURM's
    // variables), its metrics written by scaledesk_metrics and mirrored as a native run's.
    void ownCodeRunsOverSshOnTwoRanks()
    {
        const QString def = m_tmp.filePath(QStringLiteral("own.yaml"));
        QFile f(def);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("command: [/usr/bin/python3, '{code}/train_ddp.py', --epochs, '2', --steps, '5', --batch, '{local_batch}',\n"
                "          --print-argv, '{run_id}']\n"
                "code: " SCALEDESK_SOURCE_DIR "/tests/commandrun\n"
                "env: {OMP_NUM_THREADS: '1'}\n");
        f.close();
        // Its Python, checked over SSH where it will run.
        const auto test =
            m_cli.run({QStringLiteral("profiles"), QStringLiteral("test"), QStringLiteral("sb"), QStringLiteral("--run"), def});
        QVERIFY2(test.out.contains(QStringLiteral("ok   Python and PyTorch for own.yaml: /usr/bin/python3 Python 3.")),
                 qPrintable(test.all()));
        const QString name = QStringLiteral("own $(touch pwned); 'q' ü");
        const auto r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--profile"), QStringLiteral("sb"), QStringLiteral("--run"), def,
                                  QStringLiteral("--name"), name, QStringLiteral("--ranks-per-node"), QStringLiteral("2"),
                                  QStringLiteral("--local-batch"), QStringLiteral("3"), QStringLiteral("--wait"),
                                  QStringLiteral("--timeout"), QStringLiteral("400")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QCOMPARE(m_cli.state(name), QStringLiteral("completed"));
        const QString jobId = m_cli.record(name).value(QStringLiteral("job_id")).toString();
        const QJsonObject m = m_cli.manifest(name);
        QCOMPARE(m.value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
        QCOMPARE(m.value(QStringLiteral("world_size")).toInt(), 2);
        QCOMPARE(m.value(QStringLiteral("slurm_job_id")).toString(), jobId);
        QCOMPARE(m.value(QStringLiteral("global_batch_size")).toInt(), 6);
        QCOMPARE(m_cli.mirrored(name, QStringLiteral("metrics.jsonl")).count("\"kind\":\"step\""), 10);
        const QByteArray out = m_cli.mirrored(name, QStringLiteral("slurm-") + jobId + QStringLiteral(".out"));
        // The run's name reached the script as one literal argument.
        QVERIFY2(out.contains(QJsonDocument(QJsonArray{QStringLiteral("--epochs"), QStringLiteral("2"), QStringLiteral("--steps"),
                                                       QStringLiteral("5"), QStringLiteral("--batch"), QStringLiteral("3"),
                                                       QStringLiteral("--print-argv"), name})
                                  .toJson(QJsonDocument::Compact)
                                  .replace(",", ", ")),
                 out.constData());
        QVERIFY(out.contains("Time taken for epoch 2 is"));
        const QString remote = m_cli.record(name).value(QStringLiteral("remote_dir")).toString();
        QVERIFY(QFile::exists(remote + QStringLiteral("/scaledesk_metrics.py")));
        QVERIFY(!QFile::exists(remote + QStringLiteral("/pwned")));
        // The code folder was sent over SFTP into a copy named by its hash, which the ranks ran.
        static const QRegularExpression sent(
            QStringLiteral("code [0-9a-f]{16}: [0-9]+ files(; sent [0-9]+ of them|, unchanged since a launch before: nothing sent)"));
        QVERIFY2(sent.match(r.all()).hasMatch(), qPrintable(r.all()));
        const QString copy = m.value(QStringLiteral("code")).toString();
        QVERIFY2(copy.endsWith(QStringLiteral("/code/") + m.value(QStringLiteral("code_hash")).toString().left(16)), qPrintable(copy));
        QCOMPARE(m.value(QStringLiteral("code_source")).toString(), QStringLiteral(SCALEDESK_SOURCE_DIR "/tests/commandrun"));
        QFile there(copy + QStringLiteral("/train_ddp.py"));
        QFile original(QStringLiteral(SCALEDESK_SOURCE_DIR "/tests/commandrun/train_ddp.py"));
        QVERIFY(there.open(QIODevice::ReadOnly) && original.open(QIODevice::ReadOnly));
        QCOMPARE(there.readAll(), original.readAll());
    }

    // Metrics from what the code writes, over SSH under SLURM: an event file growing in the run
    // folder (found and mirrored by the poll) and the NERSC lines in slurm-<job>.out.
    void ownCodeMetricsFromEventFilesAndOutputOverSsh()
    {
        const QString data = QStringLiteral(SCALEDESK_SOURCE_DIR "/tests/backend/runs/data/nersc-example-logs/base/1GPU/00");
        const QString events = data + QStringLiteral("/logs/events.out.tfevents.1636677146.nid001104.65966.0");
        const QString def = m_tmp.filePath(QStringLiteral("written.yaml"));
        QFile f(def);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("command: [/usr/bin/python3, '{code}/grow_events.py', '" + events.toUtf8() +
                "', logs, --pieces, '5', --pause, '0.5', --log, '" + data.toUtf8() +
                "/out.log']\n"
                "code: " SCALEDESK_SOURCE_DIR "/tests/commandrun\n"
                "metrics: {tensorboard: logs, nersc: true, tags: {loss: Loss/train}}\n");
        f.close();
        const auto r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--profile"), QStringLiteral("sb"), QStringLiteral("--run"), def,
                                  QStringLiteral("--name"), QStringLiteral("written"), QStringLiteral("--wait"),
                                  QStringLiteral("--timeout"), QStringLiteral("300")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QCOMPARE(m_cli.state(QStringLiteral("written")), QStringLiteral("completed"));
        QFile whole(events);
        QVERIFY(whole.open(QIODevice::ReadOnly));
        const QByteArray bytes = whole.readAll();
        const auto scalars = scaledesk::tb::readEventBytes(bytes.constData(), std::size_t(bytes.size())).scalars.size();
        const QByteArray metrics = m_cli.mirrored(QStringLiteral("written"), QStringLiteral("metrics.jsonl"));
        QCOMPARE(metrics.count("\"kind\":\"scalar\""), qsizetype(scalars));
        QFile log(data + QStringLiteral("/out.log"));
        QVERIFY(log.open(QIODevice::ReadOnly));
        const scaledesk::NerscLog nersc = scaledesk::parseNerscLog(log.readAll(), QStringLiteral("out.log"));
        const scaledesk::EpochTable epochs = scaledesk::parseEpochsCsv(
            m_cli.mirrored(QStringLiteral("written"), QStringLiteral("epochs.csv")), QStringLiteral("epochs.csv"));
        QCOMPARE(epochs.rows.size(), nersc.epochs.size());
        QCOMPARE(epochs.rows.last().trainS, nersc.epochs.last().trainS);
    }

    void sweepRunsEveryPointAndRendersMultiNodeScripts()
    {
        const auto dry =
            m_cli.run(submitArgs(QStringLiteral("sb"), QStringLiteral("cpu-tiny"),
                                 {QStringLiteral("--sweep"), QStringLiteral("big"), QStringLiteral("--nodes"), QStringLiteral("2,4"),
                                  QStringLiteral("--ranks-per-node"), QStringLiteral("4"), QStringLiteral("--dry-run")}));
        // Weak scaling from 8 ranks: cpu-tiny's global batch of 2 does not divide; the error says so
        // (a usage error: the options ask for what the config cannot give).
        QCOMPARE(dry.exitCode, 2);
        QVERIFY2(
            dry.err.contains(QStringLiteral("global_batch_size 2 of config 'cpu-tiny' does not divide over the smallest point's 8 ranks")),
            qPrintable(dry.err));
        const auto dryLocal = m_cli.run(submitArgs(QStringLiteral("sb"), QStringLiteral("cpu-tiny"),
                                                   {QStringLiteral("--sweep"), QStringLiteral("big"), QStringLiteral("--nodes"),
                                                    QStringLiteral("2,4"), QStringLiteral("--ranks-per-node"), QStringLiteral("4"),
                                                    QStringLiteral("--local-batch"), QStringLiteral("1"), QStringLiteral("--dry-run")}));
        QCOMPARE(dryLocal.exitCode, 0);
        const QString& dryOut = dryLocal.out;
        QVERIFY(dryOut.contains(QStringLiteral("#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=4")));
        // The rendezvous: the first node of the allocation, at the address SLURM reaches it by.
        QVERIFY(dryOut.contains(QStringLiteral("first_node=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\"")));
        QVERIFY(dryOut.contains(QStringLiteral("export MASTER_ADDR=\"${MASTER_ADDR:-$first_node}\"")));

        const auto r = m_cli.run(
            submitArgs(QStringLiteral("sb"), QStringLiteral("cpu-tiny"),
                       {QStringLiteral("--sweep"), QStringLiteral("sw"), QStringLiteral("--nodes"), QStringLiteral("1"),
                        QStringLiteral("--ranks-per-node"), QStringLiteral("1,2"), QStringLiteral("--strategies"),
                        QStringLiteral("ddp,fused"), QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("600")}));
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        for (const QString& id : {QStringLiteral("sw-ddp-1x1-r1"), QStringLiteral("sw-ddp-1x2-r1"), QStringLiteral("sw-fused-1x1-r1"),
                                  QStringLiteral("sw-fused-1x2-r1")}) {
            QCOMPARE(m_cli.state(id), QStringLiteral("completed"));
            QCOMPARE(m_cli.manifest(id).value(QStringLiteral("world_size")).toInt(), id.contains(QStringLiteral("1x2")) ? 2 : 1);
            if (id.contains(QStringLiteral("1x2")))
                QCOMPARE(m_cli.manifest(id).value(QStringLiteral("strategy")).toString(), id.section(QLatin1Char('-'), 1, 1));
        }
    }

    // The report of the sweep above: its numbers equal a computation by hand from the runs'
    // mirrored epochs.csv (mean train_s, the training time, after the warm-up epoch; speedup
    // against 1 rank).
    void reportMatchesAHandComputation()
    {
        const QString dir = m_tmp.filePath(QStringLiteral("report out"));
        const auto r = m_cli.run({QStringLiteral("report"), QStringLiteral("--sweep"), QStringLiteral("sw"), QStringLiteral("--out"), dir});
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QVERIFY(QFile::exists(dir + QStringLiteral("/report.md")));
        QVERIFY(QFile::exists(dir + QStringLiteral("/runs.csv")));
        auto meanEpoch = [&](const QString& id) {
            const QList<QByteArray> lines = m_cli.mirrored(id, QStringLiteral("epochs.csv")).trimmed().split('\n');
            const int wall = lines[0].split(',').indexOf("train_s");
            double sum = 0;
            int n = 0;
            for (int i = 2; i < lines.size(); ++i) {  // line 1 is epoch 1: warm-up
                sum += lines[i].split(',')[wall].toDouble();
                ++n;
            }
            return sum / n;
        };
        QFile f(dir + QStringLiteral("/groups.csv"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QList<QByteArray> rows = f.readAll().trimmed().split('\n');
        QCOMPARE(rows.size(), 1 + 4);
        const QList<QByteArray> header = rows[0].split(',');
        QHash<QString, QList<QByteArray>> byKey;
        for (int i = 1; i < rows.size(); ++i) {
            const QList<QByteArray> cells = rows[i].split(',');
            byKey.insert(QString::fromUtf8(cells[0] + '-' + cells[1]), cells);
        }
        auto cell = [&](const QString& key, const char* column) { return byKey.value(key).value(header.indexOf(column)).toDouble(); };
        for (const QString& strategy : {QStringLiteral("ddp"), QStringLiteral("fused")}) {
            const double t1 = meanEpoch(QStringLiteral("sw-%1-1x1-r1").arg(strategy));
            const double t2 = meanEpoch(QStringLiteral("sw-%1-1x2-r1").arg(strategy));
            QVERIFY(qFuzzyCompare(cell(strategy + QStringLiteral("-1"), "epoch_s_mean"), t1));
            QVERIFY(qFuzzyCompare(cell(strategy + QStringLiteral("-2"), "epoch_s_mean"), t2));
            QVERIFY(qFuzzyCompare(cell(strategy + QStringLiteral("-2"), "speedup"), t1 / t2));
            QVERIFY(qFuzzyCompare(cell(strategy + QStringLiteral("-2"), "ideal_speedup"), 2.0));
            QVERIFY(qFuzzyCompare(cell(strategy + QStringLiteral("-2"), "strong_efficiency"), t1 / t2 / 2));
        }
    }

    // `tail --follow` prints the job's log and every training step as they arrive, then the end.
    void tailFollowsARunToItsEnd()
    {
        const QString id = QStringLiteral("tailed");
        const auto r = m_cli.run(
            submitArgs(QStringLiteral("sb"), QStringLiteral("cpu-tiny"),
                       {QStringLiteral("--name"), id, QStringLiteral("--"), QStringLiteral("--num_epochs"), QStringLiteral("6")}));
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        const auto t = m_cli.run({QStringLiteral("tail"), QStringLiteral("--follow"), id}, 600);
        QCOMPARE(t.exitCode, 0);
        QVERIFY2(t.out.contains(QStringLiteral("[metrics] step 1  loss ")), qPrintable(t.out.left(2000)));
        QVERIFY(t.out.contains(QStringLiteral("[metrics] step 48  loss ")));  // 6 epochs × 8 steps
        QCOMPARE(t.out.count(QStringLiteral("[metrics] step 17  ")), 1);      // each step once
        QVERIFY(t.out.contains(QStringLiteral("DONE ---- rank 0")));
        QVERIFY2(t.out.trimmed().endsWith(QStringLiteral("[completed: slurm: COMPLETED]")), qPrintable(t.out.right(300)));
    }

    void rejectedJobShowsSbatchsMessage()
    {
        const auto add = m_cli.run({QStringLiteral("profiles"), QStringLiteral("add"), QStringLiteral("--name"), QStringLiteral("nopart"),
                                    writeProfile(QStringLiteral("nopart"), QString(), QString(), QStringLiteral("  partition: nope\n"))});
        QVERIFY2(add.exitCode == 0, qPrintable(add.all()));
        const auto r = m_cli.run(
            submitArgs(QStringLiteral("nopart"), QStringLiteral("cpu-tiny"), {QStringLiteral("--name"), QStringLiteral("rejected")}));
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(QStringLiteral("sbatch refused the job")) && r.err.contains(QStringLiteral("nope")), qPrintable(r.err));
        QCOMPARE(m_cli.state(QStringLiteral("rejected")), QStringLiteral("submit-failed"));
        QVERIFY(m_cli.record(QStringLiteral("rejected")).value(QStringLiteral("message")).toString().contains(QStringLiteral("partition")));
        // A malformed time limit never reaches an #SBATCH line.
        const auto bad = m_cli.run(submitArgs(
            QStringLiteral("sb"), QStringLiteral("cpu-tiny"),
            {QStringLiteral("--name"), QStringLiteral("badtime"), QStringLiteral("--time"), QStringLiteral("1:00\n#SBATCH --uid=0")}));
        QCOMPARE(bad.exitCode, 2);
        QVERIFY(m_cli.record(QStringLiteral("badtime")).isEmpty());
    }

    // Two workspaces (two laptops) on one remote_root: the second one's run of an id the first one
    // already ran there is refused before anything is recorded or sent, and the first run's folder
    // (its checkpoint, which the second job would have resumed as its own) is left as it was.
    void aRunFolderOfAnotherWorkspaceIsRefused()
    {
        const QString id = QStringLiteral("shared-id");
        const auto first = m_cli.run(
            submitArgs(QStringLiteral("sb"), QStringLiteral("cpu-tiny"),
                       {QStringLiteral("--name"), id, QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("400")}));
        QVERIFY2(first.exitCode == 0, qPrintable(first.all()));
        const QString folder = m_remoteRoot + QStringLiteral("/runs/") + id;
        QFile manifest(folder + QStringLiteral("/manifest.json"));
        QVERIFY(manifest.open(QIODevice::ReadOnly));
        const QByteArray before = manifest.readAll();
        manifest.close();

        Cli other = m_cli;
        other.workspace = m_tmp.filePath(QStringLiteral("ws-other"));
        const auto add = other.run({QStringLiteral("profiles"), QStringLiteral("add"), m_tmp.filePath(QStringLiteral("sb.yaml"))});
        QVERIFY2(add.exitCode == 0, qPrintable(add.all()));
        const auto again = other.run(submitArgs(QStringLiteral("sb"), QStringLiteral("cpu-tiny"), {QStringLiteral("--name"), id}));
        QCOMPARE(again.exitCode, 1);
        QVERIFY2(again.err.contains(QStringLiteral("1 run folder(s) of this launch exist already")) && again.err.contains(folder),
                 qPrintable(again.err));
        QVERIFY2(other.record(id).isEmpty(), "the refused run was recorded");
        QVERIFY(manifest.open(QIODevice::ReadOnly));
        QCOMPARE(manifest.readAll(), before);
        // Under a name of its own the same workspace submits (the refusal was about the folder only).
        const auto renamed = other.run(submitArgs(QStringLiteral("sb"), QStringLiteral("cpu-tiny"),
                                                  {QStringLiteral("--name"), id + QStringLiteral("-b"), QStringLiteral("--wait"),
                                                   QStringLiteral("--timeout"), QStringLiteral("400")}));
        QVERIFY2(renamed.exitCode == 0, qPrintable(renamed.all()));
        QCOMPARE(other.state(id + QStringLiteral("-b")), QStringLiteral("completed"));
    }

    // A job that fails at once: the run says so, with the trainer's own error line. Its data files
    // are there (a link to a folder without them is refused over SFTP before anything is
    // recorded) but are not HDF5.
    void failingJobShowsTheTrainersError()
    {
        const QString id = QStringLiteral("fails-at-once");
        const auto missing = m_cli.run({QStringLiteral("submit"), QStringLiteral("--profile"), QStringLiteral("sb"),
                                        QStringLiteral("--config"), QStringLiteral("cpu-tiny"), QStringLiteral("--name"), id,
                                        QStringLiteral("--data"), QStringLiteral("/nonexistent-data")});
        QCOMPARE(missing.exitCode, 1);
        QVERIFY2(missing.err.contains(QStringLiteral("/nonexistent-data/train.h5")) && missing.err.contains(QStringLiteral("no such file")),
                 qPrintable(missing.err));
        QVERIFY(m_cli.record(id).isEmpty());
        const QString notHdf5 = m_tmp.filePath(QStringLiteral("not-hdf5"));
        QVERIFY(QDir().mkpath(notHdf5));
        for (const char* name : {"train.h5", "valid.h5"}) {
            QFile f(notHdf5 + QLatin1Char('/') + QLatin1String(name));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("not HDF5\n");
        }
        const auto r = m_cli.run({QStringLiteral("submit"), QStringLiteral("--profile"), QStringLiteral("sb"), QStringLiteral("--config"),
                                  QStringLiteral("cpu-tiny"), QStringLiteral("--name"), id, QStringLiteral("--data"), notHdf5,
                                  QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("300")});
        QCOMPARE(r.exitCode, 1);  // --wait: not every run completed
        const auto status = m_cli.run({QStringLiteral("status"), id});
        QCOMPARE(m_cli.state(id), QStringLiteral("failed"));
        QVERIFY2(status.out.contains(QStringLiteral("slurm: FAILED")) && status.out.contains(QStringLiteral("data/train.h5")),
                 qPrintable(status.out));
    }

    void cancelStopsARunningJob()
    {
        const QString id = QStringLiteral("ssh-cancel");
        const auto r = m_cli.run(submitArgs(QStringLiteral("sb"), QStringLiteral("cpu-short"), {QStringLiteral("--name"), id}));
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QVERIFY(m_cli.waitForSteps(id, 2, 240));
        const auto c = m_cli.run({QStringLiteral("cancel"), id});
        QVERIFY2(c.exitCode == 0, qPrintable(c.all()));
        QVERIFY(m_cli.waitFor(
            id, [](const QJsonObject& j) { return j.value(QStringLiteral("state")).toString() == QLatin1String("cancelled"); }, 120));
    }

    // USR1 (as --signal=B:USR1@… sends before the time limit): the trainer checkpoints, the job
    // script requeues the job, and the requeued job resumes from the checkpoint.
    void signalCheckpointsAndTheRequeuedJobResumes()
    {
        const QString id = QStringLiteral("ssh-requeue");
        const auto r = m_cli.run(submitArgs(QStringLiteral("sb"), QStringLiteral("cpu-tiny"),
                                            {QStringLiteral("--name"), id, QStringLiteral("--ranks-per-node"), QStringLiteral("2"),
                                             QStringLiteral("--"), QStringLiteral("--num_epochs"), QStringLiteral("30")}));
        QVERIFY2(r.exitCode == 0, qPrintable(r.all()));
        QVERIFY(m_cli.waitForSteps(id, 3, 240));
        const auto c = m_cli.run({QStringLiteral("cancel"), QStringLiteral("--signal"), QStringLiteral("USR1"), id});
        QVERIFY2(c.exitCode == 0, qPrintable(c.all()));
        QVERIFY(m_cli.waitFor(
            id, [](const QJsonObject& j) { return j.value(QStringLiteral("state")).toString() == QLatin1String("requeued"); }, 180));
        // SLURM holds a requeued job back (BeginTime) for two minutes, so the old step can clean up
        // (its pmix socket); let it start as soon as the old step is gone.
        const QString jobId = m_cli.record(id).value(QStringLiteral("job_id")).toString();
        QElapsedTimer gone;
        gone.start();
        while (!runLocal(QStringLiteral("squeue"), {QStringLiteral("-h"), QStringLiteral("-s"), QStringLiteral("-j"), jobId}).isEmpty() &&
               gone.elapsed() < 60000)
            QThread::msleep(500);
        QThread::sleep(5);
        QCOMPARE(runLocal(QStringLiteral("scontrol"),
                          {QStringLiteral("update"), QStringLiteral("JobId=") + jobId, QStringLiteral("StartTime=now")}),
                 QString());
        const auto done =
            m_cli.run({QStringLiteral("status"), QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("600"), id});
        QCOMPARE(m_cli.state(id), QStringLiteral("completed"));
        const QByteArray metrics = m_cli.mirrored(id, QStringLiteral("metrics.jsonl"));
        QVERIFY(metrics.contains("\"event\":\"preempted\""));
        QVERIFY(metrics.contains("\"event\":\"resumed\""));
        const QStringList h = m_cli.history(id);
        QCOMPARE(h.join(QLatin1Char(' ')), QStringLiteral("draft submitting queued running requeued running completed"));
    }

    void killedSubmitIsReconciled()
    {
        const QString id = QStringLiteral("ssh-killed");
        Cli crashing = m_cli;
        crashing.env.insert(QStringLiteral("SCALEDESK_FAULT_SUBMIT"), QStringLiteral("after-sbatch"));
        const auto r = crashing.run(submitArgs(QStringLiteral("sb"), QStringLiteral("cpu-tiny"), {QStringLiteral("--name"), id}));
        QVERIFY(r.crashed);
        QCOMPARE(m_cli.state(id), QStringLiteral("submitting"));
        const auto st =
            m_cli.run({QStringLiteral("status"), QStringLiteral("--wait"), QStringLiteral("--timeout"), QStringLiteral("300"), id});
        QCOMPARE(m_cli.state(id), QStringLiteral("completed"));
        QVERIFY2(st.out.contains(QStringLiteral("after an interrupted submit")), qPrintable(st.out));
        QVERIFY(!m_cli.record(id).value(QStringLiteral("job_id")).toString().isEmpty());
    }

    void unknownHostKeyIsRefusedHeadlessUnlessAccepted()
    {
        const QString kh = m_tmp.filePath(QStringLiteral("empty_known_hosts"));
        QFile(kh).open(QIODevice::WriteOnly);
        const auto add = m_cli.run({QStringLiteral("profiles"), QStringLiteral("add"), QStringLiteral("--name"), QStringLiteral("newkey"),
                                    writeProfile(QStringLiteral("newkey"), QString(), kh)});
        QCOMPARE(add.exitCode, 0);
        const auto refused = m_cli.run({QStringLiteral("profiles"), QStringLiteral("test"), QStringLiteral("newkey")});
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.all().contains(QStringLiteral("SHA256:")) && refused.all().contains(QStringLiteral("--accept-new-host-key")),
                 qPrintable(refused.all()));
        QFile f(kh);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray());  // nothing recorded
        f.close();
        const auto accepted = m_cli.run(
            {QStringLiteral("profiles"), QStringLiteral("test"), QStringLiteral("newkey"), QStringLiteral("--accept-new-host-key")});
        QVERIFY2(accepted.out.contains(QStringLiteral("ok   connect")), qPrintable(accepted.all()));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.readAll().contains("ssh-ed25519"));
        f.close();
        // Recorded: the next connection does not ask.
        const auto again = m_cli.run({QStringLiteral("profiles"), QStringLiteral("test"), QStringLiteral("newkey")});
        QVERIFY2(again.out.contains(QStringLiteral("ok   connect")) && !again.err.contains(QStringLiteral("is not known")),
                 qPrintable(again.all()));
    }

    void changedHostKeyIsAlwaysRefused()
    {
        const QString kh = m_tmp.filePath(QStringLiteral("changed_known_hosts"));
        const QString keyFile = m_tmp.filePath(QStringLiteral("other_host_key"));
        runLocal(QStringLiteral("ssh-keygen"),
                 {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"), QStringLiteral("-N"), QString(),
                  QStringLiteral("-f"), keyFile});
        QFile pub(keyFile + QStringLiteral(".pub"));
        QVERIFY(pub.open(QIODevice::ReadOnly));
        const QByteArray key = pub.readAll().split(' ').mid(0, 2).join(' ');
        QFile f(kh);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("[127.0.0.1]:26822 " + key + "\n");
        f.close();
        const auto add = m_cli.run({QStringLiteral("profiles"), QStringLiteral("add"), QStringLiteral("--name"), QStringLiteral("changed"),
                                    writeProfile(QStringLiteral("changed"), QString(), kh)});
        QCOMPARE(add.exitCode, 0);
        const auto r = m_cli.run(
            {QStringLiteral("profiles"), QStringLiteral("test"), QStringLiteral("changed"), QStringLiteral("--accept-new-host-key")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.all().contains(QStringLiteral("127.0.0.1:26822")) && r.all().contains(QStringLiteral("SHA256:")) &&
                     r.all().contains(QStringLiteral("changed")),
                 qPrintable(r.all()));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), "[127.0.0.1]:26822 " + key + "\n");  // left as it was
    }

    void unreachableHostIsAClearError()
    {
        const QString path = m_tmp.filePath(QStringLiteral("down.yaml"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("kind: ssh+slurm\nhost: 127.0.0.1\nport: 1\nremote_root: /tmp/x\ntrainer: {path: /bin/true}\n");
        f.close();
        QCOMPARE(m_cli.run({QStringLiteral("profiles"), QStringLiteral("add"), path}).exitCode, 0);
        const auto r = m_cli.run({QStringLiteral("profiles"), QStringLiteral("test"), QStringLiteral("down")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.all().contains(QStringLiteral("127.0.0.1:1")), qPrintable(r.all()));
    }
};

QTEST_GUILESS_MAIN(TestCliSandbox)
#include "tst_cli_sandbox.moc"
