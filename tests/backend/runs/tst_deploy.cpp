// The deploy build over a transport (here this machine's): it runs detached in its own process
// group, its progress is CMake's percentage read from build.log, and a cancel kills the whole
// build and leaves no `current` behind.
#include "remote/localtransport.h"
#include "runs/deploy.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
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
};

QTEST_GUILESS_MAIN(TestDeploy)
#include "tst_deploy.moc"
