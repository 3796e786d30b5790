// The code sync of a command run over the SSH sandbox: a folder of 10,000 files (500 folders of 20
// small sources, and a .gitignore'd data folder), sent once, then the check before a second launch
// of the unchanged folder (read + hash every file, one stat on the far side), then one file
// changed. The peer, measured in the same run over the same sshd: rsync's own check of the
// unchanged folder (`rsync -a --delete --dry-run`, size and mtime), the tool users reach for.
//
//   tests/sandbox/ssh-sandbox.sh start
//   ninja -C build bench-codesync         (or: build/tests/bench_codesync 2000, for another size)
#include "heldruns.h"
#include "remote/sshtransport.h"
#include "runs/codesync.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>

using namespace scaledesk;

namespace {
[[noreturn]] void die(const QString& what)
{
    std::fprintf(stderr, "bench_codesync: %s\n", qPrintable(what));
    std::exit(1);
}

void put(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size()) die(QStringLiteral("cannot write ") + path);
}

double median(QList<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/// The peer: rsync's check of the folder against the copy (-n: what it would send).
double rsyncCheck(const QString& folder, const QString& target, bool dryRun)
{
    const QString sandbox = qEnvironmentVariable("SCALEDESK_SSH_SANDBOX_DIR", QStringLiteral("/tmp/scaledesk-ssh-sandbox"));
    QStringList args{
        QStringLiteral("-a"),      QStringLiteral("--delete"), QStringLiteral("--exclude=data/"),
        QStringLiteral("--stats"), QStringLiteral("-e"),       QStringLiteral("ssh -F ") + sandbox + QStringLiteral("/ssh_config")};
    if (dryRun) args << QStringLiteral("-n");
    args << folder + QLatin1Char('/') << QStringLiteral("sandbox:") + target + QLatin1Char('/');
    QElapsedTimer t;
    t.start();
    QProcess p;
    p.start(QStringLiteral("rsync"), args);
    if (!p.waitForFinished(600000) || p.exitCode() != 0)
        die(QStringLiteral("rsync: ") + QString::fromUtf8(p.readAllStandardError()) + p.errorString());
    return t.nsecsElapsed() / 1e9;
}
}  // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    const int files = argc > 1 ? QByteArray(argv[1]).toInt() : 10000;
    QTemporaryDir tmp;
    const QString folder = tmp.filePath(QStringLiteral("model"));
    for (int i = 0; i < files; ++i) {
        const QString dir = folder + QStringLiteral("/pkg%1").arg(i / 20);
        if (i % 20 == 0) QDir().mkpath(dir);
        put(dir + QStringLiteral("/mod%1.py").arg(i % 20),
            QByteArray("# module %1\n").replace("%1", QByteArray::number(i)) + QByteArray(400 + i % 700, 'x') + '\n');
    }
    QDir().mkpath(folder + QStringLiteral("/data"));
    put(folder + QStringLiteral("/data/train.bin"), QByteArray(8 << 20, 'd'));
    put(folder + QStringLiteral("/.gitignore"), "data/\n");

    SshTransport ssh(test::sandboxSshOptions());
    const QString root = QStringLiteral("/tmp/scaledesk-bench-codesync");
    if (auto r = ssh.exec(QStringLiteral("rm -rf ") + root + QStringLiteral(" && mkdir -p ") + root, 120000); !r || r->exitCode != 0)
        die(QStringLiteral("cannot clear ") + root);

    auto sync = [&](const char* what) {
        const TransportStats before = ssh.stats();
        QElapsedTimer t;
        t.start();
        auto snap = snapshotCode(folder);
        if (!snap) die(snap.error().text());
        const double readS = t.nsecsElapsed() / 1e9;
        auto sent = syncCode(ssh, *snap, root + QStringLiteral("/code"));
        if (!sent) die(sent.error().text());
        const double s = t.nsecsElapsed() / 1e9;
        const TransportStats after = ssh.stats();
        std::printf("%-34s %7.3f s (reading + hashing %.3f s)  files %5lld  sent %5d files, %9lld content bytes, %9llu SFTP bytes, %6llu "
                    "round trips\n",
                    what, s, readS, (long long)snap->files.size(), sent->filesSent, (long long)sent->bytesSent,
                    (unsigned long long)(after.bytesWritten - before.bytesWritten),
                    (unsigned long long)(after.roundTrips - before.roundTrips));
        return s;
    };
    std::printf("bench-codesync: %d files (+ an ignored 8 MiB data folder) over SSH to the sandbox (%s)\n\n", files,
                qPrintable(ssh.describe()));
    const double oursFirst = sync("first launch (all sent)");
    QList<double> ours;
    for (int i = 0; i < 5; ++i) ours << sync("unchanged: check before a launch");

    const QString copy = root + QStringLiteral("/rsync");
    const double peerFirst = rsyncCheck(folder, copy, false);  // the peer's first copy
    QList<double> peer;
    for (int i = 0; i < 5; ++i) peer << rsyncCheck(folder, copy, true);

    put(folder + QStringLiteral("/pkg0/mod0.py"), "# changed\n");
    const double oursOne = sync("one file changed");
    const double peerOne = rsyncCheck(folder, copy, false);

    const double o = median(ours), p = median(peer);
    std::printf("\n%-40s %10s %10s %8s\n", "", "ScaleDesk", "rsync", "ratio");
    std::printf("%-40s %9.3fs %9.3fs %8.2f\n", "first launch (everything sent)", oursFirst, peerFirst, oursFirst / peerFirst);
    std::printf("%-40s %9.3fs %9.3fs %8.2f\n", "unchanged folder, median of 5 checks", o, p, o / p);
    std::printf("%-40s %9.3fs %9.3fs %8.2f\n", "one file changed", oursOne, peerOne, oursOne / peerOne);
    std::printf("(rsync: -a --delete over the same sshd; the unchanged check is its --dry-run. Below 1: faster than rsync.\n"
                " The sources here are synthetic and compress far better than real code: read the content bytes, not the SFTP bytes.)\n");
    std::printf("target: the check before the second launch at most 2 s: %.3f s, %s\n", o, o <= 2.0 ? "met" : "NOT met");
    return 0;
}
