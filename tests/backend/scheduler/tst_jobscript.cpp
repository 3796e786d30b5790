#include "scheduler/jobscript.h"

#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace scaledesk;

namespace {
JobRequest request(const QString& runId, int nodes, int ranks)
{
    JobRequest r;
    r.profile.kind = ProfileKind::SshSlurm;
    r.profile.slurm.gpusPerNode = 4;
    r.profile.slurm.cpusPerTask = 32;
    r.profile.slurm.account = QStringLiteral("m1234_g");
    r.profile.slurm.partition = QStringLiteral("gpu");
    r.profile.slurm.constraint = QStringLiteral("gpu");
    r.profile.slurm.requeue = true;
    r.profile.slurm.extraDirectives = {QStringLiteral("--exclusive")};
    r.profile.setup = QStringLiteral("module load pytorch/2.0.1\nexport NCCL_NET_GDR_LEVEL=PHB");
    r.point.runId = runId;
    r.point.strategy = QStringLiteral("zero1");
    r.point.nodes = nodes;
    r.point.ranksPerNode = ranks;
    r.point.localBatch = 16;
    r.configName = QStringLiteral("bs512_opt");
    r.trainerPath = QStringLiteral("/opt/scale desk/bin/scaledesk-train");
    return r;
}
}  // namespace

class TestJobScript : public QObject {
    Q_OBJECT
private slots:
    void rendersATrueMultiNodeScript()
    {
        const QString script = renderJobScript(request(QStringLiteral("sweep-zero1-8x4-r1"), 8, 4));
        const QStringList lines = script.split(QLatin1Char('\n'));
        for (const char* expected :
             {"#SBATCH --job-name=sweep-zero1-8x4-r1", "#SBATCH --nodes=8", "#SBATCH --ntasks-per-node=4", "#SBATCH --cpus-per-task=32",
              "#SBATCH --gpus-per-node=4", "#SBATCH --account=m1234_g", "#SBATCH --partition=gpu", "#SBATCH --constraint=gpu",
              "#SBATCH --output=slurm-%j.out", "#SBATCH --signal=B:USR1@120", "#SBATCH --requeue", "#SBATCH --exclusive",
              "module load pytorch/2.0.1", "export MASTER_PORT=$((20000 + ${SLURM_JOB_ID:-0} % 10000))"})
            QVERIFY2(lines.contains(QString::fromUtf8(expected)), expected);
        // No qos/reservation when the profile has none.
        QVERIFY(!script.contains(QStringLiteral("--qos")));
        QVERIFY(!script.contains(QStringLiteral("--reservation")));
        QVERIFY(script.contains(QStringLiteral("srun --kill-on-bad-exit=1 --export=ALL --mpi='pmix' '/opt/scale desk/bin/scaledesk-train' "
                                               "'--yaml_config' 'config.yaml' '--config' 'bs512_opt' '--run_dir' '.' "
                                               "'--strategy' 'zero1' '--threads' '32' '--resume' '--local_batch_size' '16' &")));
        QVERIFY(script.contains(QStringLiteral("scontrol requeue \"$SLURM_JOB_ID\"")));
        // #SBATCH lines must come before the first command.
        const int lastDirective = script.lastIndexOf(QStringLiteral("#SBATCH"));
        QVERIFY(lastDirective < script.indexOf(QStringLiteral("set -u")));
    }
    // The profile's PyTorch setup and environment reach every rank: after the setup lines, values
    // quoted, and srun exports the batch shell's environment even under sbatch --export=NONE.
    void theProfilesPytorchAndEnvironmentReachTheRanks()
    {
        JobRequest r = request(QStringLiteral("x"), 2, 4);
        r.profile.pytorchSetup = QStringLiteral("module load pytorch/2.3.1");
        r.profile.environment = {{QStringLiteral("NCCL_SOCKET_IFNAME"), QStringLiteral("hsn0")},
                                 {QStringLiteral("NCCL_DEBUG"), QStringLiteral("INFO $(touch pwned)")}};
        const QString script = renderJobScript(r);
        const QStringList lines = script.split(QLatin1Char('\n'));
        const qsizetype setup = lines.indexOf(QStringLiteral("module load pytorch/2.0.1"));
        const qsizetype pytorch = lines.indexOf(QStringLiteral("module load pytorch/2.3.1"));
        const qsizetype ifname = lines.indexOf(QStringLiteral("export NCCL_SOCKET_IFNAME='hsn0'"));
        const qsizetype debug = lines.indexOf(QStringLiteral("export NCCL_DEBUG='INFO $(touch pwned)'"));
        QVERIFY(setup >= 0 && pytorch > setup && ifname > pytorch && debug > ifname);
        const qsizetype srun = lines.indexOf(QRegularExpression(QStringLiteral("^srun --kill-on-bad-exit=1 --export=ALL .*")));
        QVERIFY(srun > debug);
        QVERIFY(!renderJobScript(request(QStringLiteral("x"), 1, 1)).contains(QStringLiteral("trainer.pytorch.setup")));
    }
    // A pinned master_port is the port; 0 (the default) derives one from the job id, and the
    // derivation is what bash computes.
    void masterPortIsPinnedOrPerJob()
    {
        JobRequest r = request(QStringLiteral("x"), 1, 1);
        r.profile.masterPort = 29640;
        QVERIFY(renderJobScript(r).split(QLatin1Char('\n')).contains(QStringLiteral("export MASTER_PORT=29640")));
        QProcess bash;
        bash.setProcessEnvironment([] {
            auto e = QProcessEnvironment::systemEnvironment();
            e.insert(QStringLiteral("SLURM_JOB_ID"), QStringLiteral("1234567"));
            return e;
        }());
        bash.start(QStringLiteral("bash"),
                   {QStringLiteral("-c"), masterPortLine(0, QStringLiteral("SLURM_JOB_ID")) + QStringLiteral("; echo $MASTER_PORT")});
        QVERIFY(bash.waitForFinished(10000));
        QCOMPARE(bash.readAllStandardOutput().trimmed(), QByteArray("24567"));
    }
    // MASTER_ADDR: what the profile's setup exports (a high-speed-network name), else the first
    // node's NodeAddr; never a MASTER_ADDR the submitting shell had.
    void theRendezvousHostIsTheProfilesElseTheFirstNodes_data()
    {
        QTest::addColumn<QString>("setup");
        QTest::addColumn<QByteArray>("expect");
        QTest::newRow("the first node's address") << QString() << QByteArray("10.0.0.1");
        QTest::newRow("the profile's") << QStringLiteral("export MASTER_ADDR=node1-hsn") << QByteArray("node1-hsn");
    }
    void theRendezvousHostIsTheProfilesElseTheFirstNodes()
    {
        QFETCH(QString, setup);
        QFETCH(QByteArray, expect);
        JobRequest r = request(QStringLiteral("x"), 2, 1);
        r.profile.setup = setup;
        const QString script = renderJobScript(r);
        // The script up to its MASTER_ADDR export, with scontrol standing in for SLURM's.
        const qsizetype end = script.indexOf(QLatin1Char('\n'), script.indexOf(QStringLiteral("export MASTER_ADDR=")));
        QVERIFY(end > 0);
        const QString head = QStringLiteral("scontrol() { if [ \"$2\" = hostnames ]; then echo node1; else "
                                            "echo 'NodeName=node1 Arch=x86_64 NodeAddr=10.0.0.1 NodeHostName=node1'; fi; }\n") +
            script.left(end) + QStringLiteral("\necho \"$MASTER_ADDR\"\n");
        QProcess bash;
        auto env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("MASTER_ADDR"), QStringLiteral("stale-login-node"));
        env.insert(QStringLiteral("SLURM_JOB_NODELIST"), QStringLiteral("node[1-2]"));
        bash.setProcessEnvironment(env);
        bash.start(QStringLiteral("bash"), {QStringLiteral("-c"), head});
        QVERIFY(bash.waitForFinished(10000));
        QCOMPARE(bash.readAllStandardOutput().trimmed(), expect);
    }
    void scriptIsValidBash()
    {
        QTemporaryDir dir;
        QFile f(dir.filePath(QStringLiteral("job.sbatch")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(renderJobScript(request(QStringLiteral("x"), 1, 2)).toUtf8());
        f.close();
        QProcess bash;
        bash.start(QStringLiteral("bash"), {QStringLiteral("-n"), f.fileName()});
        QVERIFY(bash.waitForFinished());
        QCOMPARE(bash.exitCode(), 0);
    }
    void hostileNamesNeverReachADirective_data()
    {
        QTest::addColumn<QString>("runId");
        QTest::newRow("substitution") << QStringLiteral("run $(touch x)");
        QTest::newRow("quotes and semicolon") << QStringLiteral("a'b\";c");
        QTest::newRow("unicode") << QStringLiteral("données-实验");
    }
    void hostileNamesNeverReachADirective()
    {
        QFETCH(QString, runId);
        const QString script = renderJobScript(request(runId, 1, 1));
        for (const auto& line : script.split(QLatin1Char('\n'))) {
            if (line.startsWith(QStringLiteral("#SBATCH --job-name="))) {
                const QString value = line.mid(QStringLiteral("#SBATCH --job-name=").size());
                QVERIFY2(QRegularExpression(QStringLiteral("^[A-Za-z0-9._-]+$")).match(value).hasMatch(), qPrintable(line));
            }
        }
        QCOMPARE(slurmJobName(runId).size(), runId.size());
        const QStringList args = sbatchArguments(QStringLiteral("/runs/") + runId);
        QCOMPARE(args.value(1), QStringLiteral("--chdir=/runs/") + runId);  // an argv element, never parsed by a shell
    }
    void cpuProfileHasNoGpuDirective()
    {
        JobRequest r = request(QStringLiteral("cpu"), 1, 2);
        r.profile.slurm.gpusPerNode = 0;
        r.profile.slurm.mpi = QStringLiteral("none");
        r.profile.slurm.requeue = false;
        r.profile.slurm.signalSeconds = 0;
        const QString script = renderJobScript(r);
        QVERIFY(!script.contains(QStringLiteral("--gpus-per-node")));
        QVERIFY(!script.contains(QStringLiteral("#SBATCH --signal")));
        QVERIFY(!script.contains(QStringLiteral("#SBATCH --requeue")));
        QVERIFY(!script.contains(QStringLiteral("scontrol requeue")));
        QVERIFY(script.contains(QStringLiteral("srun --kill-on-bad-exit=1 --export=ALL --mpi='none' ")));
    }
    // scaledesk calibrate's jobs: the benchmark in place of training, launched the same way
    // (srun under the same directives and rendezvous), with its options passed through.
    void aBenchmarkPointRunsBenchComm()
    {
        JobRequest r = request(QStringLiteral("calibrate-p-2x4"), 2, 4);
        r.point.task = QStringLiteral("bench-comm");
        r.point.strategy.clear();
        r.point.localBatch = 0;
        r.configName.clear();
        r.trainerArgs = {QStringLiteral("--sizes"), QStringLiteral("64K,1M")};
        QCOMPARE(trainerCommand(r),
                 (QStringList{QStringLiteral("/opt/scale desk/bin/scaledesk-train"), QStringLiteral("bench-comm"), QStringLiteral("--out"),
                              QStringLiteral("comm.jsonl"), QStringLiteral("--threads"), QStringLiteral("32"), QStringLiteral("--sizes"),
                              QStringLiteral("64K,1M")}));
        const QString script = renderJobScript(r);
        QVERIFY(script.contains(QStringLiteral("#SBATCH --nodes=2")));
        QVERIFY(script.contains(QStringLiteral("export MASTER_ADDR=")));
        QVERIFY(script.contains(QStringLiteral("srun --kill-on-bad-exit=1 --export=ALL --mpi='pmix' '/opt/scale desk/bin/scaledesk-train' "
                                               "'bench-comm' '--out' 'comm.jsonl' '--threads' '32' '--sizes' '64K,1M' &")));
        QVERIFY(!script.contains(QStringLiteral("--yaml_config")));
        // With a config (scaledesk calibrate --config), its own step is the benchmark's compute.
        r.configName = QStringLiteral("cpu-bench");
        r.point.localBatch = 2;
        QCOMPARE(
            trainerCommand(r),
            (QStringList{QStringLiteral("/opt/scale desk/bin/scaledesk-train"), QStringLiteral("bench-comm"), QStringLiteral("--out"),
                         QStringLiteral("comm.jsonl"), QStringLiteral("--threads"), QStringLiteral("32"), QStringLiteral("--yaml_config"),
                         QStringLiteral("config.yaml"), QStringLiteral("--config"), QStringLiteral("cpu-bench"),
                         QStringLiteral("--local_batch_size"), QStringLiteral("2"), QStringLiteral("--sizes"), QStringLiteral("64K,1M")}));
    }
};

QTEST_GUILESS_MAIN(TestJobScript)
#include "tst_jobscript.moc"
