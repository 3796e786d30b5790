// The code sync of a command run (runs/codesync.*): what is sent (only what the far side lacks;
// .gitignore honoured by git itself), what is refused with the file's name (over a limit, a link
// out of the folder, a name a file system cannot hold), and that the copy on the far side is whole,
// read-only and shared by content. Over LocalTransport (the same calls as SSH's; the SSH path is in
// tst_cli_sandbox and bench-codesync).
#include "remote/localtransport.h"
#include "runs/codesync.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <unistd.h>

using namespace scaledesk;

class TestCodeSync : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;
    LocalTransport m_local;

    static void put(const QString& path, const QByteArray& bytes, bool executable = false)
    {
        QDir().mkpath(QFileInfo(path).path());
        QFile f(path);
        QVERIFY2(f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size(), qPrintable(path));
        f.close();
        if (executable) f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
    }
    static QByteArray read(const QString& path)
    {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
    }
    // A small project: two sources, a script, and what .gitignore keeps out.
    QString project(const QString& name)
    {
        const QString dir = m_tmp.filePath(name);
        put(dir + QStringLiteral("/train.py"), "print('train')\n");
        put(dir + QStringLiteral("/model/unet.py"), "class UNet: pass\n");
        put(dir + QStringLiteral("/run.sh"), "#!/bin/sh\necho run\n", true);
        put(dir + QStringLiteral("/.gitignore"), "*.ckpt\ndata/\n__pycache__/\n");
        put(dir + QStringLiteral("/last.ckpt"), QByteArray(4096, 'c'));
        put(dir + QStringLiteral("/data/train.h5"), QByteArray(4096, 'd'));
        put(dir + QStringLiteral("/model/__pycache__/unet.cpython-311.pyc"), "pyc");
        return dir;
    }
    QString root() const { return m_tmp.filePath(QStringLiteral("far/code")); }

private slots:
    void initTestCase() { QVERIFY(m_tmp.isValid()); }

    void anUnchangedFolderSendsNothingTheSecondTime()
    {
        const QString dir = project(QStringLiteral("p1"));
        auto snap = snapshotCode(dir);
        QVERIFY2(snap, qPrintable(snap ? QString() : snap.error().text()));
        QStringList paths;
        for (const CodeFile& f : snap->files) paths << f.path;
        QCOMPARE(paths,
                 (QStringList{QStringLiteral(".gitignore"), QStringLiteral("model/unet.py"), QStringLiteral("run.sh"),
                              QStringLiteral("train.py")}));
        auto first = syncCode(m_local, *snap, root());
        QVERIFY2(first, qPrintable(first ? QString() : first.error().text()));
        QVERIFY(!first->reused);
        QCOMPARE(first->filesSent, 4);
        QCOMPARE(first->bytesSent, snap->bytes);
        QCOMPARE(first->remoteDir, root() + QLatin1Char('/') + snap->shortHash());
        QCOMPARE(read(first->remoteDir + QStringLiteral("/model/unet.py")), QByteArray("class UNet: pass\n"));
        QVERIFY(QFileInfo(first->remoteDir + QStringLiteral("/run.sh")).isExecutable());
        QVERIFY(!QFileInfo(first->remoteDir + QStringLiteral("/train.py")).isExecutable());
        QVERIFY(!QFileInfo::exists(first->remoteDir + QStringLiteral("/last.ckpt")));
        QVERIFY(!QFileInfo::exists(first->remoteDir + QStringLiteral("/data")));
        QVERIFY(QDir(root()).entryList({QStringLiteral(".building*")}, QDir::AllEntries | QDir::Hidden).isEmpty());

        auto again = snapshotCode(dir);
        QVERIFY(again);
        QCOMPARE(again->hash, snap->hash);
        auto second = syncCode(m_local, *again, root());
        QVERIFY(second);
        QVERIFY(second->reused);
        QCOMPARE(second->filesSent, 0);
        QCOMPARE(second->bytesSent, qint64(0));
        QCOMPARE(second->remoteDir, first->remoteDir);
    }

    void aChangedFileSendsOneFileAndTheOldCopyStays()
    {
        const QString dir = project(QStringLiteral("p2"));
        auto before = snapshotCode(dir);
        QVERIFY(before);
        QVERIFY(syncCode(m_local, *before, root()));
        put(dir + QStringLiteral("/model/unet.py"), "class UNet:\n    depth = 5\n");
        auto after = snapshotCode(dir);
        QVERIFY(after);
        QVERIFY(after->hash != before->hash);
        auto sent = syncCode(m_local, *after, root());
        QVERIFY2(sent, qPrintable(sent ? QString() : sent.error().text()));
        QCOMPARE(sent->filesSent, 1);
        QCOMPARE(sent->bytesSent, qint64(QByteArray("class UNet:\n    depth = 5\n").size()));
        QCOMPARE(read(sent->remoteDir + QStringLiteral("/model/unet.py")), QByteArray("class UNet:\n    depth = 5\n"));
        // A run queued with the code before still has it.
        QCOMPARE(read(root() + QLatin1Char('/') + before->shortHash() + QStringLiteral("/model/unet.py")),
                 QByteArray("class UNet: pass\n"));
        // The copy is read-only: the code cannot change a file another run shares.
        QVERIFY(!(QFileInfo(sent->remoteDir + QStringLiteral("/train.py")).permissions() & QFileDevice::WriteOwner));
    }

    // Many files go as one archive; the next copy starts from the folder's latest one, so removed
    // files, a file that became a folder and a new empty-folder leftover come out right.
    void manyFilesAndTheNextCopyFromTheLatest()
    {
        const QString dir = project(QStringLiteral("p8"));
        for (int i = 0; i < 40; ++i)
            put(dir + QStringLiteral("/pkg/m%1.py").arg(i), QByteArray("v = ") + QByteArray::number(i) + '\n', i == 7);
        put(dir + QStringLiteral("/old/gone.py"), "gone");
        put(dir + QStringLiteral("/layers"), "a file for now");
        auto first = snapshotCode(dir);
        QVERIFY(first);
        const QString far = m_tmp.filePath(QStringLiteral("far8/code"));  // a store of its own: every file is new to it
        auto sent = syncCode(m_local, *first, far);
        QVERIFY2(sent, qPrintable(sent ? QString() : sent.error().text()));
        QCOMPARE(sent->filesSent, first->files.size());
        QCOMPARE(read(sent->remoteDir + QStringLiteral("/pkg/m39.py")), QByteArray("v = 39\n"));
        QVERIFY(QFileInfo(sent->remoteDir + QStringLiteral("/pkg/m7.py")).isExecutable());
        QVERIFY(QDir(far + QStringLiteral("/objects")).entryList({QStringLiteral(".pack*")}, QDir::AllEntries | QDir::Hidden).isEmpty());

        QVERIFY(QDir(dir + QStringLiteral("/old")).removeRecursively());
        QVERIFY(QFile::remove(dir + QStringLiteral("/layers")));
        put(dir + QStringLiteral("/layers/conv.py"), "conv");
        put(dir + QStringLiteral("/pkg/m3.py"), "v = 'three'\n");
        auto next = snapshotCode(dir);
        QVERIFY(next);
        auto again = syncCode(m_local, *next, far);
        QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
        QVERIFY(again->fromBase);
        QCOMPARE(again->filesSent, 2);
        const QString copy = again->remoteDir;
        QVERIFY(!QFileInfo::exists(copy + QStringLiteral("/old")));
        QCOMPARE(read(copy + QStringLiteral("/layers/conv.py")), QByteArray("conv"));
        QCOMPARE(read(copy + QStringLiteral("/pkg/m3.py")), QByteArray("v = 'three'\n"));
        QCOMPARE(read(copy + QStringLiteral("/pkg/m4.py")), QByteArray("v = 4\n"));
        // The copy holds exactly the folder's files.
        QStringList there;
        QDirIterator it(copy, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
        while (it.hasNext()) there << it.next().mid(copy.size() + 1);
        there.sort();
        QStringList expected;
        for (const CodeFile& f : next->files) expected << f.path;
        QCOMPARE(there, expected);
        // The first copy is untouched.
        QCOMPARE(read(sent->remoteDir + QStringLiteral("/old/gone.py")), QByteArray("gone"));
        QCOMPARE(read(sent->remoteDir + QStringLiteral("/pkg/m3.py")), QByteArray("v = 3\n"));
    }

    void theSameCodeElsewhereSharesOneCopy()
    {
        auto a = snapshotCode(project(QStringLiteral("p3a")));
        auto b = snapshotCode(project(QStringLiteral("p3b")));
        QVERIFY(a && b);
        QCOMPARE(a->hash, b->hash);
        QVERIFY(syncCode(m_local, *a, root()));
        auto second = syncCode(m_local, *b, root());
        QVERIFY(second);
        QVERIFY(second->reused);
        // A mode change is a change: the script that becomes executable gets a new copy.
        QFile::setPermissions(m_tmp.filePath(QStringLiteral("p3b/train.py")),
                              QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        auto c = snapshotCode(m_tmp.filePath(QStringLiteral("p3b")));
        QVERIFY(c);
        QVERIFY(c->hash != a->hash);
    }

    void aFileOverTheLimitIsRefusedByName()
    {
        const QString dir = project(QStringLiteral("p4"));
        put(dir + QStringLiteral("/weights/pretrained.bin"), QByteArray(3000, 'w'));
        auto big = snapshotCode(dir, {2048, 1 << 20});
        QVERIFY(!big);
        QVERIFY2(big.error().message.contains(QStringLiteral("'weights/pretrained.bin'")), qPrintable(big.error().text()));
        QVERIFY2(big.error().message.contains(QStringLiteral("max_file_mb")), qPrintable(big.error().text()));
        QCOMPARE(big.error().location, dir);
        auto total = snapshotCode(dir, {1 << 20, 2000});
        QVERIFY(!total);
        QVERIFY2(total.error().message.contains(QStringLiteral("max_total_mb")) &&
                     total.error().message.contains(QStringLiteral("weights/pretrained.bin")),
                 qPrintable(total.error().text()));
        // Ignored, it is not sent and not counted.
        put(dir + QStringLiteral("/.gitignore"), "*.ckpt\ndata/\n__pycache__/\nweights/\n");
        QVERIFY(snapshotCode(dir, {2048, 1 << 20}));
    }

    void aLinkOutOfTheFolderIsNeverFollowed()
    {
        const QString dir = project(QStringLiteral("p5"));
        put(m_tmp.filePath(QStringLiteral("secret.txt")), "secret");
        QVERIFY(QFile::link(m_tmp.filePath(QStringLiteral("secret.txt")), dir + QStringLiteral("/config.txt")));
        auto out = snapshotCode(dir);
        QVERIFY(!out);
        QVERIFY2(out.error().message.contains(QStringLiteral("'config.txt' is a link")) &&
                     out.error().message.contains(QStringLiteral("outside the code folder")),
                 qPrintable(out.error().text()));
        QFile::remove(dir + QStringLiteral("/config.txt"));
        QVERIFY(QFile::link(QStringLiteral("../p5/train.py"), dir + QStringLiteral("/sneaky.py")));  // in, by a detour
        QVERIFY(QFile::link(QStringLiteral("nowhere.py"), dir + QStringLiteral("/dangling.py")));
        auto dangling = snapshotCode(dir);
        QVERIFY(!dangling);
        QVERIFY2(dangling.error().message.contains(QStringLiteral("'dangling.py'")), qPrintable(dangling.error().text()));
        QFile::remove(dir + QStringLiteral("/dangling.py"));
        // A link to a file inside is sent as that file's content.
        auto in = snapshotCode(dir);
        QVERIFY2(in, qPrintable(in ? QString() : in.error().text()));
        auto sent = syncCode(m_local, *in, root());
        QVERIFY(sent);
        QCOMPARE(read(sent->remoteDir + QStringLiteral("/sneaky.py")), QByteArray("print('train')\n"));
        QVERIFY(!QFileInfo(sent->remoteDir + QStringLiteral("/sneaky.py")).isSymLink());
    }

    void namesAFileSystemCannotHoldAreRefused()
    {
        const QByteArrayList bad{QByteArray("line\nbreak.py"), QByteArray("bell\x07.py"), QByteArray("latin1-\xe9t\xe9.py")};
        for (const QByteArray& name : bad) {
            const QString dir = project(QStringLiteral("p6-%1").arg(bad.indexOf(name)));
            const QByteArray path = QFile::encodeName(dir) + '/' + name;
            const int fd = ::open(path.constData(), O_CREAT | O_WRONLY, 0644);
            QVERIFY(fd >= 0);
            ::close(fd);
            auto refused = snapshotCode(dir);
            QVERIFY2(!refused, name.constData());
            QVERIFY2(refused.error().message.contains(QStringLiteral("cannot be sent")), qPrintable(refused.error().text()));
            ::unlink(path.constData());  // Qt could not remove a name that is not UTF-8
        }
        // A name with spaces, quotes and shell syntax is an ordinary name, and arrives as it is.
        const QString dir = project(QStringLiteral("p7"));
        const QString odd = QStringLiteral("it's $(a) `b`; c & d.py");
        put(dir + QLatin1Char('/') + odd, "odd");
        auto snap = snapshotCode(dir);
        QVERIFY(snap);
        auto sent = syncCode(m_local, *snap, root());
        QVERIFY2(sent, qPrintable(sent ? QString() : sent.error().text()));
        QCOMPARE(read(sent->remoteDir + QLatin1Char('/') + odd), QByteArray("odd"));
        QVERIFY(!QFileInfo::exists(QStringLiteral("a")) && !QFileInfo::exists(QStringLiteral("b")));
    }

    // In a git checkout the checkout's rules apply (also a .gitignore above the folder), and the
    // launch reads the commit and the uncommitted diff there (the copy on the cluster is no checkout).
    void aCheckoutGivesItsCommitAndDiff()
    {
        const QString repo = m_tmp.filePath(QStringLiteral("repo"));
        put(repo + QStringLiteral("/.gitignore"), "*.log\n");
        const QString dir = repo + QStringLiteral("/src");
        put(dir + QStringLiteral("/train.py"), "print(1)\n");
        put(dir + QStringLiteral("/out.log"), "log");
        auto gitIn = [&](const QStringList& args) {
            QProcess p;
            p.setWorkingDirectory(repo);
            p.start(
                QStringLiteral("git"),
                QStringList{QStringLiteral("-c"), QStringLiteral("user.name=t"), QStringLiteral("-c"), QStringLiteral("user.email=t@t")} +
                    args);
            return p.waitForFinished() && p.exitCode() == 0;
        };
        QVERIFY(gitIn({QStringLiteral("init"), QStringLiteral("-q")}));
        QVERIFY(gitIn({QStringLiteral("add"), QStringLiteral(".")}));
        QVERIFY(gitIn({QStringLiteral("commit"), QStringLiteral("-qm"), QStringLiteral("first")}));
        auto clean = snapshotCode(dir);
        QVERIFY2(clean, qPrintable(clean ? QString() : clean.error().text()));
        QCOMPARE(clean->files.size(), 1);  // out.log: the checkout's .gitignore, above the folder
        QCOMPARE(clean->gitCommit.size(), 40);
        QVERIFY(!clean->gitDirty);
        put(dir + QStringLiteral("/train.py"), "print(2)\n");
        auto dirty = snapshotCode(dir);
        QVERIFY(dirty);
        QVERIFY(dirty->gitDirty);
        QVERIFY2(dirty->gitDiff.contains("+print(2)"), dirty->gitDiff.constData());
    }

    void aMissingFolderIsRefused()
    {
        auto none = snapshotCode(m_tmp.filePath(QStringLiteral("nope")));
        QVERIFY(!none);
        QVERIFY(none.error().message.contains(QStringLiteral("no such folder")));
    }
};

QTEST_GUILESS_MAIN(TestCodeSync)
#include "tst_codesync.moc"
