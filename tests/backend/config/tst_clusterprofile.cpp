#include "config/clusterprofile.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace scaledesk;

class TestClusterProfile : public QObject {
    Q_OBJECT
private slots:
    void examplesLoad()
    {
        const QString dir = QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/profiles/");
        const auto pm = loadClusterProfile(dir + QStringLiteral("perlmutter.yaml"));
        QVERIFY2(pm.hasValue(), qPrintable(pm.hasValue() ? QString() : pm.error().text()));
        QCOMPARE(pm->name, QStringLiteral("perlmutter"));
        QCOMPARE(pm->kind, ProfileKind::SshSlurm);
        QCOMPARE(pm->slurm.gpusPerNode, 4);
        QCOMPARE(pm->slurm.account, QStringLiteral("m0000_g"));
        QVERIFY(pm->slurm.requeue);
        QVERIFY(pm->trainerDeploy);
        QVERIFY(pm->setup.contains(QStringLiteral("module load cmake")));
        QCOMPARE(pm->pytorchSetup.trimmed(), QStringLiteral("module load pytorch/2.3.1"));
        QCOMPARE(pm->pytorchInterpreter(), QStringLiteral("python"));
        QVERIFY(pm->environment.contains(qMakePair(QStringLiteral("NCCL_SOCKET_IFNAME"), QStringLiteral("hsn"))));
        const auto generic = loadClusterProfile(dir + QStringLiteral("generic.yaml"));
        QVERIFY(generic.hasValue());
        QCOMPARE(generic->trainerPath, QStringLiteral("/opt/scaledesk/bin/scaledesk-train"));
        QCOMPARE(generic->slurm.gpusPerNode, 0);
        QCOMPARE(generic->port, 22);
    }
    // Golden folder: each bad/*.yaml states the error it must give on its first line.
    void badProfilesNameFileLineAndKey()
    {
        const QDir dir(QStringLiteral(SCALEDESK_TEST_DATA "/config/profiles/bad"));
        const auto files = dir.entryList({QStringLiteral("*.yaml")}, QDir::Files);
        QVERIFY(files.size() >= 6);
        for (const auto& name : files) {
            QFile f(dir.filePath(name));
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QString expect = QString::fromUtf8(f.readLine()).trimmed().mid(QStringLiteral("# expect: ").size());
            const auto p = loadClusterProfile(dir.filePath(name));
            QVERIFY2(!p.hasValue(), qPrintable(name));
            QVERIFY2(p.error().text().endsWith(expect) || p.error().text().contains(expect),
                     qPrintable(name + QStringLiteral(": got ") + p.error().text() + QStringLiteral(", wanted ") + expect));
        }
    }
    // A local profile's slots: 0 (every usable core) unless given; a profile file round-trips them.
    void localSlots()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("laptop.yaml"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("kind: local\nslots: 3\n");
        f.close();
        const auto p = loadClusterProfile(path);
        QVERIFY2(p.hasValue(), qPrintable(p.hasValue() ? QString() : p.error().text()));
        QCOMPARE(p->localSlots, 3);
        QVERIFY(clusterProfileYaml(*p).contains("slots: 3"));
        QCOMPARE(ClusterProfile().localSlots, 0);
    }
    void missingFile()
    {
        const auto p = loadClusterProfile(QStringLiteral("/nonexistent/x.yaml"));
        QVERIFY(!p.hasValue());
        QCOMPARE(p.error().text(), QStringLiteral("/nonexistent/x.yaml: no such file"));
    }
};

QTEST_GUILESS_MAIN(TestClusterProfile)
#include "tst_clusterprofile.moc"
