// What the add-cluster wizard reads from a cluster (sinfo, sacctmgr) and the profile it writes.
#include "config/profiles.h"
#include "runs/clusterprobe.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace scaledesk;

class TestClusterProbe : public QObject {
    Q_OBJECT
private slots:
    void gpusAreCountedFromGres_data()
    {
        QTest::addColumn<QString>("gres");
        QTest::addColumn<int>("gpus");
        QTest::newRow("none") << QStringLiteral("(null)") << 0;
        QTest::newRow("empty") << QString() << 0;
        QTest::newRow("plain") << QStringLiteral("gpu:4") << 4;
        QTest::newRow("typed with sockets") << QStringLiteral("gpu:a100:4(S:0-1)") << 4;
        QTest::newRow("two types") << QStringLiteral("gpu:2,gpu:v100:2") << 4;
        QTest::newRow("other gres") << QStringLiteral("shard:8,gpu:a100:8(S:0-3)") << 8;
        QTest::newRow("no gpu") << QStringLiteral("craynetwork:4") << 0;
        QTest::newRow("a gpu-named type is not a count") << QStringLiteral("gpu:gpu80g:2") << 2;
    }
    void gpusAreCountedFromGres()
    {
        QFETCH(QString, gres);
        QFETCH(int, gpus);
        QCOMPARE(gpusInGres(gres), gpus);
    }

    // sinfo -h -o '%P|%l|%D|%c|%G': the default partition is starred, a partition with two node
    // groups comes on two lines, "infinite" is UNLIMITED, "32+" heterogeneous CPUs.
    void sinfoIsParsed()
    {
        const QByteArray text = "debug*|30:00|1|2|(null)\n"
                                "gpu|1-00:00:00|16|64|gpu:a100:4(S:0-1)\n"
                                "gpu|1-00:00:00|8|128|gpu:a100:8(S:0-3)\n"
                                "long|infinite|4|32+|(null)\n"
                                "garbage line\n"
                                "broken|1:00|x|2|(null)\n";
        const QList<PartitionInfo> p = parseSinfo(text);
        QCOMPARE(p.size(), 3);
        QCOMPARE(p[0].name, QStringLiteral("debug"));
        QVERIFY(p[0].isDefault);
        QCOMPARE(p[0].timeLimit, QStringLiteral("30:00"));
        QCOMPARE(p[0].cpusPerNode, 2);
        QCOMPARE(p[0].gpusPerNode, 0);
        QCOMPARE(p[0].gres, QString());
        QCOMPARE(p[1].name, QStringLiteral("gpu"));
        QVERIFY(!p[1].isDefault);
        QCOMPARE(p[1].nodes, 24);
        QCOMPARE(p[1].cpusPerNode, 64);
        QCOMPARE(p[1].gpusPerNode, 4);
        QCOMPARE(p[1].gres, QStringLiteral("gpu:a100:4(S:0-1),gpu:a100:8(S:0-3)"));
        QCOMPARE(p[2].timeLimit, QStringLiteral("UNLIMITED"));
        QCOMPARE(p[2].cpusPerNode, 32);
        QVERIFY(isSlurmTimeLimit(p[1].timeLimit) && isSlurmTimeLimit(p[2].timeLimit));
    }

    void associationsAreParsed()
    {
        QStringList accounts, qos;
        parseAssociations("m1234|normal,debug\nm1234|premium\nm5678|\n\n", &accounts, &qos);
        QCOMPARE(accounts, (QStringList{QStringLiteral("m1234"), QStringLiteral("m5678")}));
        QCOMPARE(qos, (QStringList{QStringLiteral("normal"), QStringLiteral("debug"), QStringLiteral("premium")}));
    }

    // The wizard's profile file reads back as the same profile, through the loader `profiles add` uses.
    void profileYamlReadsBack()
    {
        ClusterProfile p;
        p.name = QStringLiteral("perl");
        p.host = QStringLiteral("perlmutter");
        p.port = 2222;
        p.user = QStringLiteral("alice");
        p.identityFile = QStringLiteral("/home/alice/.ssh/id ed25519");
        p.proxyJump = QStringLiteral("bob@jump:22");
        p.knownHostsFile = QStringLiteral("/tmp/kh");
        p.remoteRoot = QStringLiteral("$SCRATCH/scaledesk: runs");
        p.setup = QStringLiteral("module load cmake\nmodule load 'gcc: 12'\n");
        p.slurm.partition = QStringLiteral("gpu");
        p.slurm.account = QStringLiteral("m1234");
        p.slurm.qos = QStringLiteral("debug");
        p.slurm.gpusPerNode = 4;
        p.slurm.cpusPerTask = 32;
        p.slurm.timeLimit = QStringLiteral("1-00:00:00");
        p.slurm.mpi = QStringLiteral("none");
        p.slurm.extraDirectives = {QStringLiteral("--exclusive")};
        p.trainerDeploy = true;
        p.trainerPrebuilt = true;
        p.pytorchSetup = QStringLiteral("module load pytorch/2.3.1\n");
        p.pytorchPython = QStringLiteral("/opt/conda/bin/python3");
        p.environment = {{QStringLiteral("NCCL_SOCKET_IFNAME"), QStringLiteral("hsn0")},
                         {QStringLiteral("NCCL_IB_HCA"), QStringLiteral("mlx5_0:1,mlx5_1:1 'q'")}};
        QTemporaryDir dir;
        const Workspace ws(dir.path());
        auto saved = saveProfile(ws, p, false);
        QVERIFY2(saved, qPrintable(saved ? QString() : saved.error().text()));
        auto back = loadClusterProfile(*saved);
        QVERIFY2(back, qPrintable(back ? QString() : back.error().text()));
        QCOMPARE(back->name, p.name);
        QCOMPARE(back->host, p.host);
        QCOMPARE(back->port, p.port);
        QCOMPARE(back->user, p.user);
        QCOMPARE(back->identityFile, p.identityFile);
        QCOMPARE(back->proxyJump, p.proxyJump);
        QCOMPARE(back->knownHostsFile, p.knownHostsFile);
        QCOMPARE(back->remoteRoot, p.remoteRoot);
        QCOMPARE(back->setup.trimmed(), p.setup.trimmed());
        QCOMPARE(back->slurm.partition, p.slurm.partition);
        QCOMPARE(back->slurm.account, p.slurm.account);
        QCOMPARE(back->slurm.qos, p.slurm.qos);
        QCOMPARE(back->slurm.gpusPerNode, 4);
        QCOMPARE(back->slurm.cpusPerTask, 32);
        QCOMPARE(back->slurm.timeLimit, p.slurm.timeLimit);
        QCOMPARE(back->slurm.mpi, p.slurm.mpi);
        QCOMPARE(back->slurm.extraDirectives, p.slurm.extraDirectives);
        QVERIFY(back->trainerDeploy && back->trainerPrebuilt);
        QCOMPARE(back->pytorchSetup.trimmed(), p.pytorchSetup.trimmed());
        QCOMPARE(back->pytorchPython, p.pytorchPython);
        QCOMPARE(back->environment, p.environment);
        // The same name again: refused unless it is an edit.
        auto again = saveProfile(ws, p, false);
        QVERIFY(!again);
        QCOMPARE(again.error().code, ErrorCode::ProfileExists);
        p.slurm.qos = QStringLiteral("premium");
        QVERIFY(saveProfile(ws, p, true));
        QCOMPARE(loadClusterProfile(*saved)->slurm.qos, QStringLiteral("premium"));
    }

    // An invalid profile is refused with the loader's error, naming the profile's file and the
    // key, and nothing is written or replaced.
    void invalidProfileWritesNothing()
    {
        QTemporaryDir dir;
        const Workspace ws(dir.path());
        ClusterProfile p;
        p.name = QStringLiteral("bad");
        p.host = QStringLiteral("h");
        p.remoteRoot = QStringLiteral("r");
        p.trainerPath = QStringLiteral("/bin/true");
        p.slurm.partition = QStringLiteral("two words");  // would add a directive
        auto r = saveProfile(ws, p, false);
        QVERIFY(!r);
        QVERIFY2(r.error().text().contains(QStringLiteral("bad.yaml")) && r.error().text().contains(QStringLiteral("slurm.partition")),
                 qPrintable(r.error().text()));
        QVERIFY(!QFile::exists(ws.profilesDir() + QStringLiteral("/bad.yaml")));
        p.slurm.partition = QStringLiteral("ok");
        QVERIFY(saveProfile(ws, p, false));
        p.slurm.partition = QStringLiteral("not ok");
        QVERIFY(!saveProfile(ws, p, true));
        QCOMPARE(loadClusterProfile(ws.profilesDir() + QStringLiteral("/bad.yaml"))->slurm.partition, QStringLiteral("ok"));
        p.name = QStringLiteral("../escape");
        QCOMPARE(saveProfile(ws, p, false).error().code, ErrorCode::ProfileName);
        QVERIFY(QDir(ws.profilesDir()).entryList(QDir::Files | QDir::Hidden).size() == 1);
    }
};

// What `profiles test` says about the trainer's GPU build and the nodes' GPUs.
class TestGpuChecks : public QObject {
    Q_OBJECT
private slots:
    void versionLinesAreRead_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QString>("libtorch");
        QTest::addColumn<QString>("cuda");
        QTest::addColumn<QString>("nccl");
        QTest::newRow("cuda") << QStringLiteral("scaledesk-train 0.1.0+g7616347b358b (libtorch 2.6.0, CUDA 12.4, NCCL 2.22.3)")
                              << QStringLiteral("2.6.0") << QStringLiteral("12.4") << QStringLiteral("2.22.3");
        QTest::newRow("cpu") << QStringLiteral("scaledesk-train 0.1.0+gabc (libtorch 1.13.0, CPU only)") << QStringLiteral("1.13.0")
                             << QString() << QString();
        QTest::newRow("older trainer") << QStringLiteral("scaledesk-train 0.1.0+gabc (libtorch 1.13.0, CPU)") << QStringLiteral("1.13.0")
                                       << QString() << QString();
        QTest::newRow("cuda without nccl") << QStringLiteral("scaledesk-train 0.2 (libtorch 2.9.1+cu130, CUDA 13.0, no NCCL)")
                                           << QStringLiteral("2.9.1+cu130") << QStringLiteral("13.0") << QString();
    }
    void versionLinesAreRead()
    {
        QFETCH(QString, line);
        const TrainerBuild b = parseTrainerVersion(line);
        QVERIFY(b.parsed);
        QTEST(b.libtorch, "libtorch");
        QTEST(b.cuda, "cuda");
        QTEST(b.nccl, "nccl");
        QVERIFY(!parseTrainerVersion(QStringLiteral("bash: scaledesk-train: command not found")).parsed);
    }

    void aCpuTrainerFailsOnlyWhereTheProfileAsksForGpus()
    {
        const TrainerBuild cpu = parseTrainerVersion(QStringLiteral("scaledesk-train 0.1 (libtorch 1.13.0, CPU only)"));
        const TrainerBuild gpu = parseTrainerVersion(QStringLiteral("scaledesk-train 0.1 (libtorch 2.6.0, CUDA 12.4, NCCL 2.22.3)"));
        ClusterProfile cpuProfile, gpuProfile;
        gpuProfile.slurm.gpusPerNode = 4;
        auto checks = gpuChecks(cpuProfile, cpu, 0, QStringLiteral("partition debug, GRES none"));
        QCOMPARE(checks.size(), 2);
        QVERIFY(checks[0].ok && checks[1].ok);
        QCOMPARE(checks[0].detail, QStringLiteral("CPU-only libtorch 1.13.0"));
        QCOMPARE(checks[1].detail, QStringLiteral("0 (partition debug, GRES none); the profile asks for 0"));
        checks = gpuChecks(gpuProfile, cpu, 4, QStringLiteral("partition gpu, GRES gpu:a100:4"));
        QVERIFY(!checks[0].ok);
        QVERIFY2(checks[0].detail.contains(QStringLiteral("asks for 4 GPU(s) per node, which this trainer cannot use")),
                 qPrintable(checks[0].detail));
        QVERIFY(checks[1].ok);
        checks = gpuChecks(gpuProfile, gpu, 4, QStringLiteral("partition gpu, GRES gpu:a100:4"));
        QVERIFY(checks[0].ok && checks[1].ok);
        QCOMPARE(checks[0].detail, QStringLiteral("CUDA libtorch 2.6.0 (CUDA 12.4), NCCL 2.22.3"));
        // Nodes with fewer GPUs than the profile asks for, or a count nobody can tell.
        checks = gpuChecks(gpuProfile, gpu, 2, QStringLiteral("partition gpu, GRES gpu:2"));
        QVERIFY(!checks[1].ok);
        QVERIFY(checks[1].detail.contains(QStringLiteral("fewer than the profile's slurm.gpus_per_node")));
        checks = gpuChecks(gpuProfile, gpu, -1, QStringLiteral("sinfo did not answer"));
        QVERIFY(!checks[1].ok);
        QCOMPARE(checks[1].detail, QStringLiteral("unknown (sinfo did not answer)"));
    }
};

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    TestClusterProbe probe;
    TestGpuChecks gpu;
    return QTest::qExec(&probe, argc, argv) | QTest::qExec(&gpu, argc, argv);
}
#include "tst_clusterprobe.moc"
