// The deploy build over a transport (here this machine's): it runs detached in its own process
// group, its progress is CMake's percentage read from build.log, and a cancel kills the whole
// build and leaves no `current` behind. A deploy is reused only while its trainer still runs and
// prints what its `ready` marker holds.
#include "remote/localtransport.h"
#include "runs/deploy.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace scaledesk;

namespace {
void write(const QString& path, const QByteArray& text)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(text);
}

// Whether a process whose command line holds `marker` runs.
bool running(const QString& marker)
{
    QProcess p;
    p.start(QStringLiteral("pgrep"), {QStringLiteral("-f"), marker});
    p.waitForFinished(5000);
    return p.exitCode() == 0;
}
}  // namespace

class TestDeploy : public QObject {
    Q_OBJECT
private slots:
    void buildProgressAndCancel()
    {
        QTemporaryDir tmp;
        const QString src = tmp.filePath(QStringLiteral("src"));
        // A stand-in trainer whose build takes a while: two targets, the second a long custom step.
        const QByteArray marker = "scaledesk-deploy-test-" + QByteArray::number(QCoreApplication::applicationPid());
        write(src + QStringLiteral("/CMakeLists.txt"),
              "cmake_minimum_required(VERSION 3.16)\nproject(stand_in C)\nadd_subdirectory(trainer)\n");
        write(src + QStringLiteral("/trainer/CMakeLists.txt"),
              "add_custom_target(slow ALL COMMAND sh -c \"sleep 60 # " + marker +
                  "\")\nadd_executable(scaledesk-train main.c)\n"
                  "add_dependencies(scaledesk-train slow)\n");
        write(src + QStringLiteral("/trainer/main.c"), "int main(void) { return 0; }\n");
        ClusterProfile p;
        p.name = QStringLiteral("here");
        p.remoteRoot = tmp.filePath(QStringLiteral("root"));
        p.buildJobs = 1;
        LocalTransport t;
        DeployOptions o;
        o.sourceDir = src;
        o.pollMs = 200;
        QList<ProgressStep> steps;
        bool building = false;
        o.progress = [&](const ProgressStep& s) {
            steps << s;
            building = building || s.text.startsWith(QLatin1String("building the trainer there"));
        };
        // Cancel once the build is under way (its slow step started).
        o.stopRequested = [&] { return building && running(QString::fromLatin1(marker)); };
        QElapsedTimer clock;
        clock.start();
        auto r = deployTrainer(t, p, o);
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::DeployCancelled);
        QVERIFY2(clock.elapsed() < 45000, "the cancel waited for the build");
        // The upload went file by file (transient steps with counts), then the build's percentage.
        bool upload = false, build = false;
        for (const ProgressStep& s : steps) {
            upload = upload || (s.transient && s.text.startsWith(QLatin1String("uploading ")) && s.total == 3);
            build = build || (s.transient && s.total == 100 && s.text.contains(QLatin1String(" %")));
        }
        QVERIFY(upload);
        QVERIFY(build);
        // The build's whole process group is gone (the sleep included), and nothing was made current.
        QTRY_VERIFY_WITH_TIMEOUT(!running(QString::fromLatin1(marker)), 10000);
        QVERIFY(!QFile::exists(p.remoteRoot + QStringLiteral("/trainer/current")));
    }

    // A `ready` marker that merely exists is not a build: the trainer it stands for must still run
    // there and print the marker's --version. A purged binary, a marker that says something else,
    // and changed setup lines (another compiler or libtorch) each build again; an unchanged one is
    // reused. The same holds for a prebuilt upload.
    void aBuildIsReusedOnlyWhileItsTrainerMatchesItsMarker()
    {
        QTemporaryDir tmp;
        const QString src = tmp.filePath(QStringLiteral("src"));
        write(src + QStringLiteral("/CMakeLists.txt"),
              "cmake_minimum_required(VERSION 3.16)\nproject(stand_in C)\nadd_subdirectory(trainer)\n");
        write(src + QStringLiteral("/trainer/CMakeLists.txt"), "add_executable(scaledesk-train main.c)\n");
        write(src + QStringLiteral("/trainer/main.c"),
              "#include <stdio.h>\n#include <stdlib.h>\nint main(void) { const char* l = getenv(\"STAND_IN_LIBTORCH\");\n"
              "  printf(\"scaledesk-train stand-in (libtorch %s)\\n\", l ? l : \"none\"); return 0; }\n");
        ClusterProfile p;
        p.name = QStringLiteral("here");
        p.remoteRoot = tmp.filePath(QStringLiteral("root"));
        p.buildJobs = 1;
        p.setup = QStringLiteral("export STAND_IN_LIBTORCH=2.3");
        LocalTransport t;
        QStringList said;
        DeployOptions o;
        o.sourceDir = src;
        o.pollMs = 100;
        o.progress = [&](const ProgressStep& s) { said << s.text; };
        auto deploy = [&]() -> DeployResult {
            said.clear();
            auto r = deployTrainer(t, p, o);
            if (!r) qWarning().noquote() << r.error().text();
            return r ? *r : DeployResult{};
        };
        const DeployResult first = deploy();
        QVERIFY(!first.trainerPath.isEmpty() && !first.reused);
        const QString dir = p.remoteRoot + QStringLiteral("/trainer/") + first.hash;
        QFile marker(dir + QStringLiteral("/ready"));
        QVERIFY(marker.open(QIODevice::ReadOnly));
        QCOMPARE(marker.readAll(), QByteArray("scaledesk-train stand-in (libtorch 2.3)\n"));
        marker.close();
        QVERIFY(deploy().reused);

        QVERIFY(QFile::remove(first.trainerPath));  // a scratch purge took the binary, not the marker
        DeployResult again = deploy();
        QVERIFY2(!again.reused && QFile::exists(first.trainerPath), qPrintable(said.join(QLatin1Char('\n'))));
        QVERIFY2(said.filter(QStringLiteral("is not usable: its trainer no longer runs there")).size() == 1,
                 qPrintable(said.join(QLatin1Char('\n'))));

        write(dir + QStringLiteral("/ready"), "scaledesk-train stand-in (libtorch 1.13)\n");  // a marker of another build
        again = deploy();
        QVERIFY(!again.reused);
        QVERIFY2(said.filter(QStringLiteral("where the marker says \"scaledesk-train stand-in (libtorch 1.13)\"")).size() == 1,
                 qPrintable(said.join(QLatin1Char('\n'))));
        QVERIFY(deploy().reused);

        p.setup = QStringLiteral("export STAND_IN_LIBTORCH=2.5");  // the module now loads another libtorch
        const DeployResult other = deploy();
        QVERIFY(!other.reused);
        QVERIFY(other.hash != first.hash);
        QFile otherMarker(p.remoteRoot + QStringLiteral("/trainer/") + other.hash + QStringLiteral("/ready"));
        QVERIFY(otherMarker.open(QIODevice::ReadOnly));
        QCOMPARE(otherMarker.readAll(), QByteArray("scaledesk-train stand-in (libtorch 2.5)\n"));

        // A prebuilt upload whose copy there was cut to nothing is uploaded again.
        write(tmp.filePath(QStringLiteral("prebuilt")), "#!/bin/sh\necho 'scaledesk-train prebuilt stand-in'\n");
        QFile::setPermissions(tmp.filePath(QStringLiteral("prebuilt")),
                              QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        o.prebuiltBinary = tmp.filePath(QStringLiteral("prebuilt"));
        const DeployResult up = deploy();
        QVERIFY(!up.trainerPath.isEmpty() && !up.reused);
        QVERIFY(deploy().reused);
        QFile cut(up.trainerPath);
        QVERIFY(cut.open(QIODevice::WriteOnly | QIODevice::Truncate));
        cut.close();
        const DeployResult reup = deploy();
        QVERIFY2(!reup.reused && QFileInfo(up.trainerPath).size() > 0, qPrintable(said.join(QLatin1Char('\n'))));
        QVERIFY(deploy().reused);
    }
};

QTEST_GUILESS_MAIN(TestDeploy)
#include "tst_deploy.moc"
