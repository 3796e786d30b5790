#include "runs/deploy.h"

#include "scheduler/shellquote.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>

namespace scaledesk {

QStringList trainerSourceFiles(const QString& sourceDir)
{
    const QDir base(sourceDir);
    QStringList files;
    for (const QString& f : {QStringLiteral("CMakeLists.txt"), QStringLiteral("configs/unet.yaml")})
        if (QFileInfo(base.filePath(f)).isFile()) files << f;
    QDirIterator it(base.filePath(QStringLiteral("trainer")), QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) files << base.relativeFilePath(it.next());
    files.sort();
    return files;
}

QString contentHash(const QString& baseDir, const QStringList& files)
{
    QCryptographicHash h(QCryptographicHash::Sha256);
    for (const QString& rel : files) {
        QFile f(QDir(baseDir).filePath(rel));
        h.addData(rel.toUtf8());
        h.addData(QByteArrayView("\0", 1));
        if (f.open(QIODevice::ReadOnly)) h.addData(f.readAll());
        h.addData(QByteArrayView("\0", 1));
    }
    return QString::fromLatin1(h.result().toHex().left(16));
}

QString bundledTrainerSources()
{
    const QString env = qEnvironmentVariable("SCALEDESK_TRAINER_SOURCES");
    if (!env.isEmpty()) return env;
    if (QCoreApplication::instance()) {
        const QString installed = QCoreApplication::applicationDirPath() + QStringLiteral("/../share/scaledesk/trainer-src");
        if (QFileInfo(installed + QStringLiteral("/CMakeLists.txt")).isFile()) return QDir::cleanPath(installed);
    }
    return QStringLiteral(SCALEDESK_SOURCE_DIR);
}

namespace {
Expected<QString> trainerRoot(Transport& t, const ClusterProfile& p)
{
    auto root = t.absolutePath(p.remoteRoot);
    if (!root) return root.error();
    return *root + QStringLiteral("/trainer");
}

Status writeCurrent(Transport& t, const QString& root, const QString& trainer)
{
    return t.writeFile(root + QStringLiteral("/current"), trainer.toUtf8() + '\n');
}
}  // namespace

Expected<QString> deployedTrainer(Transport& t, const ClusterProfile& p)
{
    auto root = trainerRoot(t, p);
    if (!root) return root.error();
    auto current = t.readAt(*root + QStringLiteral("/current"), 0, 4096);
    if (!current) {
        if (current.error().code == ErrorCode::TransportNoFile)
            return Error{ErrorCode::DeployMissing,
                         QStringLiteral("no trainer deployed yet; run `scaledesk deploy --profile %1`").arg(p.name), t.describe()};
        return current.error();
    }
    return QString::fromUtf8(*current).trimmed();
}

Expected<DeployResult> deployTrainer(Transport& t, const ClusterProfile& p, const DeployOptions& o)
{
    auto say = [&](const QString& s) {
        if (o.progress) o.progress(s);
    };
    auto root = trainerRoot(t, p);
    if (!root) return root.error();
    DeployResult result;

    if (!o.prebuiltBinary.isEmpty()) {
        QFile bin(o.prebuiltBinary);
        if (!bin.open(QIODevice::ReadOnly)) return Error{ErrorCode::DeployIo, bin.errorString(), o.prebuiltBinary};
        const QByteArray data = bin.readAll();
        result.hash = QString::fromLatin1(QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex().left(16));
        const QString dir = *root + QStringLiteral("/bin-") + result.hash;
        result.trainerPath = dir + QStringLiteral("/scaledesk-train");
        if (auto ready = t.stat(dir + QStringLiteral("/ready")); ready) {
            result.reused = true;
            say(QStringLiteral("prebuilt trainer %1 already deployed").arg(result.hash));
        } else {
            say(QStringLiteral("uploading %1 (%2 MB)").arg(o.prebuiltBinary).arg(data.size() / 1e6, 0, 'f', 1));
            if (auto ok = t.makeDirs(dir); !ok) return ok.error();
            if (auto ok = t.writeFile(result.trainerPath, data, 0755); !ok) return ok.error();
            auto check = t.exec(shellJoin({result.trainerPath, QStringLiteral("--version")}), 60000, Idempotent::Yes);
            if (!check) return check.error();
            if (check->exitCode != 0)
                return Error{ErrorCode::DeployMismatch,
                             QStringLiteral("the uploaded trainer does not run there (the cluster does not match this machine): %1")
                                 .arg(QString::fromUtf8(check->err + check->out).trimmed().left(400)),
                             t.describe()};
            if (auto ok = t.writeFile(dir + QStringLiteral("/ready"), check->out); !ok) return ok.error();
        }
        if (auto ok = writeCurrent(t, *root, result.trainerPath); !ok) return ok.error();
        return result;
    }

    // CMake reads ';' in a path as a list separator and cannot build there.
    if (root->contains(QLatin1Char(';')))
        return Error{ErrorCode::DeployPath,
                     QStringLiteral("CMake cannot build under a path that contains ';' (%1); choose another remote_root, or deploy a "
                                    "prebuilt trainer")
                         .arg(*root),
                     t.describe()};
    const QStringList files = trainerSourceFiles(o.sourceDir);
    if (!files.contains(QStringLiteral("CMakeLists.txt")) || files.size() < 3)
        return Error{ErrorCode::DeploySources, QStringLiteral("no trainer sources here"), o.sourceDir};
    result.hash = contentHash(o.sourceDir, files);
    const QString dir = *root + QLatin1Char('/') + result.hash;
    result.trainerPath = dir + QStringLiteral("/build/trainer/scaledesk-train");
    if (auto ready = t.stat(dir + QStringLiteral("/ready")); ready) {
        result.reused = true;
        say(QStringLiteral("trainer %1 already built there; reusing it").arg(result.hash));
        if (auto ok = writeCurrent(t, *root, result.trainerPath); !ok) return ok.error();
        return result;
    }
    say(QStringLiteral("uploading %1 source files to %2").arg(files.size()).arg(dir));
    QStringList made;
    for (const QString& rel : files) {
        const QString remote = dir + QStringLiteral("/src/") + rel;
        const QString parent = remote.left(remote.lastIndexOf(QLatin1Char('/')));
        if (!made.contains(parent)) {
            if (auto ok = t.makeDirs(parent); !ok) return ok.error();
            made << parent;
        }
        QFile f(QDir(o.sourceDir).filePath(rel));
        if (!f.open(QIODevice::ReadOnly)) return Error{ErrorCode::DeployIo, f.errorString(), f.fileName()};
        if (auto ok = t.writeFile(remote, f.readAll()); !ok) return ok.error();
    }
    say(QStringLiteral("building there with the profile's setup lines (log: %1/build.log)").arg(dir));
    QString script = QStringLiteral("set -e\ncd %1\n").arg(shellQuote(dir));
    if (!p.setup.trimmed().isEmpty()) script += p.setup.trimmed() + QLatin1Char('\n');
    script += QStringLiteral("cmake -S src -B build -DCMAKE_BUILD_TYPE=Release -DSCALEDESK_BUILD_BACKEND=OFF -DSCALEDESK_BUILD_GUI=OFF "
                             "-DBUILD_TESTING=OFF\n"
                             "cmake --build build --target scaledesk-train -j %1\n"
                             "build/trainer/scaledesk-train --version > ready.part\nmv ready.part ready\n")
                  .arg(p.buildJobs);
    if (auto ok = t.writeFile(dir + QStringLiteral("/build.sh"), script.toUtf8(), 0755); !ok) return ok.error();
    auto built =
        t.exec(QStringLiteral("cd %1 && /bin/bash build.sh > build.log 2>&1; rc=$?; tail -n 30 build.log; exit $rc").arg(shellQuote(dir)),
               3 * 3600 * 1000);
    if (!built) return built.error();
    if (built->exitCode != 0)
        return Error{ErrorCode::DeployBuild,
                     QStringLiteral("the trainer build failed (exit %1); the end of %2/build.log:\n%3")
                         .arg(built->exitCode)
                         .arg(dir, QString::fromUtf8(built->out).trimmed()),
                     t.describe()};
    if (auto ok = writeCurrent(t, *root, result.trainerPath); !ok) return ok.error();
    return result;
}

}  // namespace scaledesk
