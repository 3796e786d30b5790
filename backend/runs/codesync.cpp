#include "runs/codesync.h"

#include "remote/transport.h"
#include "scheduler/shellquote.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QStringDecoder>
#include <QSysInfo>
#include <QTemporaryDir>

#include <algorithm>
#include <unistd.h>

namespace scaledesk {

namespace {

Error refused(const QString& folder, const QString& what)
{
    return Error{ErrorCode::ConfigInvalid, QStringLiteral("code: ") + what, folder};
}

struct GitRun {
    QByteArray out;
    bool ok = false;
    QString problem;
};

GitRun git(const QString& folder, const QStringList& args)
{
    QProcess p;
    p.setWorkingDirectory(folder);
    p.start(QStringLiteral("git"), args);
    GitRun r;
    if (!p.waitForStarted(10000)) {
        r.problem = QStringLiteral("git did not start (%1); reading a code folder's .gitignore needs git").arg(p.errorString());
        return r;
    }
    p.closeWriteChannel();
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        r.problem = QStringLiteral("git %1 took over 2 minutes").arg(args.value(0));
        return r;
    }
    r.out = p.readAllStandardOutput();
    r.ok = p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    if (!r.ok)
        r.problem = QStringLiteral("git %1: %2").arg(args.join(QLatin1Char(' ')), QString::fromUtf8(p.readAllStandardError()).trimmed());
    return r;
}

/// The files git would take from `folder` (tracked, and untracked ones no ignore rule excludes), as
/// git names them: raw bytes, '/'-separated, relative to the folder. Outside a checkout a
/// throwaway repository lends git's own reading of the .gitignore files.
Expected<QList<QByteArray>> listFiles(const QString& folder, bool inCheckout)
{
    QTemporaryDir scratch;
    QStringList args{QStringLiteral("ls-files"), QStringLiteral("-z"), QStringLiteral("--cached"), QStringLiteral("--others"),
                     QStringLiteral("--exclude-standard")};
    if (!inCheckout) {
        if (!scratch.isValid()) return refused(folder, QStringLiteral("no temporary folder for git: ") + scratch.errorString());
        if (auto init = git(folder, {QStringLiteral("init"), QStringLiteral("-q"), QStringLiteral("--bare"), scratch.path()}); !init.ok)
            return refused(folder, init.problem);
        args.prepend(QStringLiteral("--work-tree=."));
        args.prepend(QStringLiteral("--git-dir=") + scratch.path());
    }
    const GitRun listed = git(folder, args);
    if (!listed.ok) return refused(folder, listed.problem);
    QList<QByteArray> names = listed.out.split('\0');
    names.removeAll(QByteArray());
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

/// Why a cluster's file system cannot hold `name`, or empty.
QString badName(const QByteArray& name)
{
    QStringDecoder utf8(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QString text = utf8(name);  // decoding sets hasError()
    if (utf8.hasError()) return QStringLiteral("the name is not UTF-8");
    if (name.size() > 4095) return QStringLiteral("the path is over 4,095 bytes");
    for (const char c : name)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return QStringLiteral("the name holds a control character");
    for (const QByteArray& part : name.split('/'))
        if (part.size() > 255) return QStringLiteral("a part of the name is over 255 bytes");
    return {};
}

QString shown(const QByteArray& name)
{
    QString s = QString::fromUtf8(name);
    for (QChar& c : s)
        if (c.unicode() < 0x20 || c.unicode() == 0x7f) c = QLatin1Char('?');
    return s;
}

Expected<QByteArray> sha256Of(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return Error{ErrorCode::ConfigInvalid, QStringLiteral("code: cannot read: ") + f.errorString(), path};
    QCryptographicHash h(QCryptographicHash::Sha256);
    if (!h.addData(&f)) return Error{ErrorCode::ConfigInvalid, QStringLiteral("code: cannot read: ") + f.errorString(), path};
    return h.result().toHex();
}

/// One listed name checked and hashed; false with no error: not part of the code (a tracked file
/// deleted in the working tree).
Expected<bool> addFile(const QString& folder, const QString& canonicalFolder, const QByteArray& name, const CodeLimits& limits,
                       CodeSnapshot& snap)
{
    if (const QString why = badName(name); !why.isEmpty())
        return refused(folder, QStringLiteral("'%1' cannot be sent: %2").arg(shown(name), why));
    const QString rel = QString::fromUtf8(name);
    const QString path = folder + QLatin1Char('/') + rel;
    const QFileInfo info(path);
    if (info.isSymLink()) {
        const QString target = info.canonicalFilePath();
        if (target.isEmpty())
            return refused(folder, QStringLiteral("'%1' is a link to '%2', which does not exist").arg(rel, info.symLinkTarget()));
        if (!target.startsWith(canonicalFolder + QLatin1Char('/')))
            return refused(folder,
                           QStringLiteral("'%1' is a link to '%2', outside the code folder: it is never followed there").arg(rel, target));
        if (!QFileInfo(target).isFile())
            return refused(folder, QStringLiteral("'%1' is a link to a folder; links to folders are not sent").arg(rel));
    } else if (!info.exists()) {
        return false;
    } else if (!info.isFile()) {
        return refused(folder, QStringLiteral("'%1' is not a file (a git submodule?); it cannot be sent").arg(rel));
    }
    if (info.size() > limits.maxFileBytes)
        return refused(folder,
                       QStringLiteral("'%1' is %2 MB, over the limit of %3 MB per file (sync.max_file_mb, or add it to .gitignore)")
                           .arg(rel)
                           .arg(double(info.size()) / (1 << 20), 0, 'f', 1)
                           .arg(double(limits.maxFileBytes) / (1 << 20), 0, 'f', 0));
    auto sha = sha256Of(path);
    if (!sha) return sha.error();
    snap.files.push_back({rel, *sha, info.size(), info.isExecutable()});
    snap.bytes += info.size();
    return true;
}

Status overTotal(const QString& folder, const CodeSnapshot& snap, const CodeLimits& limits)
{
    QList<CodeFile> largest = snap.files;
    std::sort(largest.begin(), largest.end(), [](const CodeFile& a, const CodeFile& b) { return a.size > b.size; });
    QStringList names;
    for (qsizetype i = 0; i < std::min<qsizetype>(3, largest.size()); ++i)
        names << QStringLiteral("%1 (%2 MB)").arg(largest[i].path).arg(double(largest[i].size) / (1 << 20), 0, 'f', 1);
    return refused(folder,
                   QStringLiteral("the folder's %1 files are %2 MB, over the limit of %3 MB (sync.max_total_mb); the largest: %4")
                       .arg(snap.files.size())
                       .arg(double(snap.bytes) / (1 << 20), 0, 'f', 1)
                       .arg(double(limits.maxTotalBytes) / (1 << 20), 0, 'f', 0)
                       .arg(names.join(QStringLiteral(", "))));
}

void readGitState(const QString& folder, CodeSnapshot& snap)
{
    const GitRun head = git(folder, {QStringLiteral("rev-parse"), QStringLiteral("HEAD")});
    if (!head.ok) return;  // a checkout with no commit yet
    snap.gitCommit = QString::fromUtf8(head.out).trimmed();
    // The changes of what is sent: the folder's, not the rest of a larger checkout's.
    const GitRun status = git(folder,
                              {QStringLiteral("status"), QStringLiteral("--porcelain"), QStringLiteral("--untracked-files=no"),
                               QStringLiteral("--"), QStringLiteral(".")});
    snap.gitDirty = status.ok && !status.out.trimmed().isEmpty();
    if (snap.gitDirty)
        snap.gitDiff = git(folder, {QStringLiteral("diff"), QStringLiteral("HEAD"), QStringLiteral("--"), QStringLiteral(".")}).out;
}

QString objectName(const CodeFile& f) { return QString::fromLatin1(f.sha256) + (f.executable ? QStringLiteral("-x") : QString()); }

/// Names a source folder on the far side: its latest copy there is the base of its next one.
QString sourceId(const CodeSnapshot& snap)
{
    const QByteArray who = QSysInfo::machineHostName().toUtf8() + ':' + snap.folder.toUtf8();
    return QString::fromLatin1(QCryptographicHash::hash(who, QCryptographicHash::Sha256).toHex().left(16));
}

QByteArray q8(const QString& s) { return shellQuote(s).toUtf8(); }

/// What the far side has: the contents it lacks, and the latest copy of this folder with its list.
struct FarSide {
    QSet<QString> missing;
    QString base;                       ///< short hash, or empty
    QHash<QString, QString> baseFiles;  ///< path -> object
};

Expected<FarSide> askFarSide(Transport& transport, const CodeSnapshot& snap, const QString& root)
{
    QByteArray ask = "cd " + q8(root) + " || exit 1\nwhile read -r h; do [ -e \"objects/$h\" ] || echo \"$h\"; done <<'EOF'\n";
    QSet<QString> wanted;
    for (const CodeFile& f : snap.files)
        if (!wanted.contains(objectName(f))) {
            wanted.insert(objectName(f));
            ask += objectName(f).toLatin1() + '\n';
        }
    ask += "EOF\necho '--- base'\nb=$(cat last-" + sourceId(snap).toLatin1() +
        " 2>/dev/null) && [ -d \"$b\" ] && [ -f \"$b.files\" ] && echo \"$b\" && cat \"$b.files\"\nexit 0\n";
    auto said = transport.execScript(ask, 120000, Idempotent::Yes);
    if (!said) return said.error();
    if (said->exitCode != 0)
        return Error{ErrorCode::TransportIo, QStringLiteral("cannot list the code objects: ") + QString::fromUtf8(said->err).trimmed(),
                     root};
    FarSide far;
    const QList<QByteArray> lines = said->out.split('\n');
    qsizetype i = 0;
    for (; i < lines.size() && lines[i] != "--- base"; ++i)
        if (!lines[i].isEmpty()) far.missing.insert(QString::fromLatin1(lines[i]));
    static const QRegularExpression shortHash(QStringLiteral("^[0-9a-f]{16}$"));
    if (++i < lines.size() && shortHash.match(QString::fromLatin1(lines[i])).hasMatch()) {
        far.base = QString::fromLatin1(lines[i]);
        for (++i; i < lines.size(); ++i) {
            const qsizetype tab = lines[i].indexOf('\t');
            if (tab > 0) far.baseFiles.insert(QString::fromUtf8(lines[i].mid(tab + 1)), QString::fromLatin1(lines[i].left(tab)));
        }
    }
    return far;
}

Expected<QByteArray> readChecked(const CodeSnapshot& snap, const CodeFile& f)
{
    QFile local(snap.folder + QLatin1Char('/') + f.path);
    if (!local.open(QIODevice::ReadOnly))
        return Error{ErrorCode::ConfigInvalid, QStringLiteral("code: ") + local.errorString(), local.fileName()};
    QByteArray bytes = local.readAll();
    if (QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex() != f.sha256)
        return Error{ErrorCode::ConfigInvalid, QStringLiteral("code: the file changed while it was sent; launch again"), local.fileName()};
    return bytes;
}

/// What a sync sends and links: the contents the far side lacks, the files of the copy that differ
/// from the base, and the archive (when there is one) that carries both.
struct Plan {
    QList<const CodeFile*> send;  ///< one per missing object
    QList<const CodeFile*> link;  ///< the copy's files that the base does not have as they are
    bool packed = false;          ///< send (and link's files among them) go as one tar archive
    QString packName;             ///< .pack-<hash>: the archive and its scratch folder on the far side
};

Plan plan(const CodeSnapshot& snap, const FarSide& far)
{
    Plan p;
    QSet<QString> missing = far.missing;
    for (const CodeFile& f : snap.files) {
        if (missing.remove(objectName(f))) p.send << &f;
        if (far.baseFiles.value(f.path) != objectName(f)) p.link << &f;
    }
    constexpr qsizetype kPackFrom = 16;
    p.packed = p.send.size() >= kPackFrom;
    p.packName = QStringLiteral(".pack-%1").arg(snap.shortHash());
    return p;
}

/// The archive, made by GNU tar (gzip) from a staging folder: objects/<name> (each content to
/// send, read-only once unpacked) and tree/<path> (hard links to them for the copy's files), which tar stores as links,
/// so each content travels once and unpacking links the copy's files with no process per file.
Expected<QByteArray> packArchive(const CodeSnapshot& snap, const Plan& p)
{
    QTemporaryDir staging;
    if (!staging.isValid()) return Error{ErrorCode::StoreIo, QStringLiteral("no temporary folder: ") + staging.errorString(), QString()};
    const QString objects = staging.filePath(QStringLiteral("objects/"));
    QDir().mkpath(objects);
    QSet<QString> staged;
    for (const CodeFile* f : p.send) {
        if (auto bytes = readChecked(snap, *f); !bytes) return bytes.error();  // a file that changed since it was hashed stops the launch
        // A hard link when the code shares the file system with the staging folder, else a copy
        // (the modes are set on the far side: a link's inode is the user's own file).
        const QString from = snap.folder + QLatin1Char('/') + f->path;
        const QString to = objects + objectName(*f);
        if (::link(QFile::encodeName(from).constData(), QFile::encodeName(to).constData()) != 0 && !QFile::copy(from, to))
            return Error{ErrorCode::StoreIo, QStringLiteral("cannot stage the code for tar"), to};
        staged.insert(objectName(*f));
    }
    for (const CodeFile* f : p.link) {
        if (!staged.contains(objectName(*f))) continue;
        const QString to = staging.filePath(QStringLiteral("tree/") + f->path);
        QDir().mkpath(QFileInfo(to).path());
        if (::link(QFile::encodeName(objects + objectName(*f)).constData(), QFile::encodeName(to).constData()) != 0)
            return Error{ErrorCode::StoreIo, QStringLiteral("cannot stage the code for tar"), to};
    }
    QProcess tar;
    tar.setWorkingDirectory(staging.path());
    QStringList what{QStringLiteral("objects")};
    if (QFileInfo::exists(staging.filePath(QStringLiteral("tree")))) what << QStringLiteral("tree");
    tar.start(QStringLiteral("tar"), QStringList{QStringLiteral("-cz"), QStringLiteral("--owner=0"), QStringLiteral("--group=0")} + what);
    tar.closeWriteChannel();
    QByteArray pack;
    while (tar.waitForReadyRead(600000)) pack += tar.readAllStandardOutput();
    tar.waitForFinished(60000);
    pack += tar.readAllStandardOutput();
    if (tar.exitStatus() != QProcess::NormalExit || tar.exitCode() != 0)
        return Error{ErrorCode::StoreIo,
                     QStringLiteral("tar of the code failed: ") + QString::fromUtf8(tar.readAllStandardError()).trimmed() +
                         tar.errorString(),
                     snap.folder};
    return pack;
}

/// Sends what the far side lacks: a few files one by one into the objects, more as one archive
/// beside them (unpacked by the copy's script).
Status sendMissing(Transport& transport, const CodeSnapshot& snap, const Plan& p, const QString& root, CodeSyncReport& report)
{
    for (const CodeFile* f : p.send) {
        report.bytesSent += f->size;
        ++report.filesSent;
    }
    if (p.packed) {
        auto pack = packArchive(snap, p);
        if (!pack) return pack.error();
        return transport.writeFile(root + QLatin1Char('/') + p.packName + QStringLiteral(".tar"), *pack, 0600);
    }
    for (const CodeFile* f : p.send) {
        auto bytes = readChecked(snap, *f);
        if (!bytes) return bytes.error();
        if (auto ok = transport.writeFile(root + QStringLiteral("/objects/") + objectName(*f), *bytes, f->executable ? 0555 : 0444); !ok)
            return ok;
    }
    return Done{};
}

/// The script that makes the copy in a temporary folder renamed into place (one rename: whole or
/// absent; a launch that lost the race drops its own). With a base (this folder's latest copy) the
/// base is linked whole (`cp -al`, one process) and only what differs is changed. An archive is
/// unpacked into a scratch folder, its objects renamed into the store (an interrupted transfer
/// leaves none with the wrong content under its name) and its tree linked in whole; only the
/// files whose content was there already get one `ln` each.
QByteArray copyScript(const CodeSnapshot& snap, const FarSide& far, const Plan& p)
{
    const QByteArray tree = q8(snap.shortHash());
    const QByteArray scratch = q8(p.packName);
    QByteArray build = "set -e\nt=$(mktemp -d .building.XXXXXX)\n";
    if (!far.base.isEmpty()) {
        build += "cp -al " + q8(far.base) + "/. \"$t\"/\n";
        QSet<QString> paths;
        for (const CodeFile& f : snap.files) paths.insert(f.path);
        for (auto it = far.baseFiles.cbegin(); it != far.baseFiles.cend(); ++it)
            if (!paths.contains(it.key())) build += "rm -rf \"$t\"/" + q8(it.key()) + '\n';
        for (const CodeFile* f : p.link) build += "rm -rf \"$t\"/" + q8(f->path) + '\n';
    }
    QSet<QString> packed;
    if (p.packed) {
        for (const CodeFile* f : p.send) packed.insert(objectName(*f));
        build += "rm -rf " + scratch + "\nmkdir " + scratch + "\ntar -xzf " + scratch + ".tar -C " + scratch + "\nrm -f " + scratch +
            ".tar\nchmod -R a-w " + scratch + "/objects/*\nif [ -d " + scratch + "/tree ]; then cp -al --remove-destination " + scratch +
            "/tree/. \"$t\"/; fi\nfind " + scratch + "/objects -type f -exec mv -f -t objects {} +\nrm -rf " + scratch + '\n';
    }
    QSet<QString> dirs;
    for (const CodeFile* f : p.link) {
        const QString parent = QFileInfo(f->path).path();
        if (packed.contains(objectName(*f)) || parent == QLatin1String(".") || dirs.contains(parent)) continue;
        dirs.insert(parent);
        build += "mkdir -p \"$t\"/" + q8(parent) + '\n';
    }
    for (const CodeFile* f : p.link) {
        if (packed.contains(objectName(*f))) continue;
        const QByteArray from = "objects/" + objectName(*f).toLatin1();
        const QByteArray to = "\"$t\"/" + q8(f->path);
        build += "ln " + from + ' ' + to + " 2>/dev/null || cp -p " + from + ' ' + to + '\n';
    }
    if (!far.base.isEmpty()) build += "find \"$t\" -mindepth 1 -type d -empty -delete\n";
    const QByteArray last = "last-" + sourceId(snap).toLatin1();
    build += "chmod 755 \"$t\"\ncat > \"$t.files\" <<'EOF'\n";
    for (const CodeFile& f : snap.files) build += objectName(f).toLatin1() + '\t' + f.path.toUtf8() + '\n';
    build += "EOF\nif mv -T \"$t\" " + tree + " 2>/dev/null; then mv -f \"$t.files\" " + tree +
        ".files; else rm -rf \"$t\" \"$t.files\"; test -d " + tree + "; fi\necho " + tree + " > " + last + ".new\nmv -f " + last + ".new " +
        last + '\n';
    return build;
}

}  // namespace

Expected<CodeSnapshot> snapshotCode(const QString& folderIn, const CodeLimits& limits)
{
    const QFileInfo dir(folderIn);
    if (!dir.isDir()) return refused(folderIn, QStringLiteral("no such folder on this machine"));
    CodeSnapshot snap;
    snap.folder = dir.absoluteFilePath();
    const QString canonical = dir.canonicalFilePath();
    const bool inCheckout =
        git(snap.folder, {QStringLiteral("rev-parse"), QStringLiteral("--is-inside-work-tree")}).out.trimmed() == "true";
    auto names = listFiles(snap.folder, inCheckout);
    if (!names) return names.error();
    for (const QByteArray& name : *names) {
        auto added = addFile(snap.folder, canonical, name, limits, snap);
        if (!added) return added.error();
        if (snap.bytes > limits.maxTotalBytes) {
            if (auto ok = overTotal(snap.folder, snap, limits); !ok) return ok.error();
        }
    }
    if (snap.files.isEmpty()) return refused(snap.folder, QStringLiteral("the folder has no files to send (all of them ignored?)"));
    QCryptographicHash tree(QCryptographicHash::Sha256);
    for (const CodeFile& f : snap.files) {
        tree.addData(f.executable ? QByteArrayView("x ") : QByteArrayView("f "));
        tree.addData(f.path.toUtf8());
        tree.addData(QByteArrayView("\0", 1));
        tree.addData(f.sha256);
        tree.addData(QByteArrayView("\n"));
    }
    snap.hash = tree.result().toHex();
    if (inCheckout) readGitState(snap.folder, snap);
    return snap;
}

Expected<CodeSyncReport> syncCode(Transport& transport, const CodeSnapshot& snap, const QString& codeRootIn)
{
    auto root = transport.absolutePath(codeRootIn);
    if (!root) return root.error();
    CodeSyncReport report;
    report.remoteDir = *root + QLatin1Char('/') + snap.shortHash();
    if (auto there = transport.stat(report.remoteDir); there && there->isDir) {
        report.reused = true;
        return report;
    } else if (!there && there.error().code != ErrorCode::TransportNoFile) {
        return there.error();
    }
    const QString objects = *root + QStringLiteral("/objects");
    if (auto ok = transport.makeDirs(objects); !ok) return ok.error();
    auto far = askFarSide(transport, snap, *root);  // one round trip for the whole tree
    if (!far) return far.error();
    const Plan p = plan(snap, *far);
    if (auto ok = sendMissing(transport, snap, p, *root, report); !ok) return ok.error();
    report.fromBase = !far->base.isEmpty();
    auto built = transport.execScript("cd " + q8(*root) + " || exit 1\n" + copyScript(snap, *far, p), 300000, Idempotent::Yes);
    if (!built) return built.error();
    if (built->exitCode != 0)
        return Error{ErrorCode::TransportIo, QStringLiteral("cannot make the code's copy: ") + QString::fromUtf8(built->err).trimmed(),
                     report.remoteDir};
    return report;
}

}  // namespace scaledesk
