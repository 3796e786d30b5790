#include "runs/deploy.h"

#include "config/profiles.h"

#include "scheduler/shellquote.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QThread>

namespace scaledesk {

QStringList trainerSourceFiles(const QString& sourceDir)
{
    const QDir base(sourceDir);
    QStringList files;
    for (const QString& f : {QStringLiteral("CMakeLists.txt"), QStringLiteral("configs/unet.yaml")})
        if (QFileInfo(base.filePath(f)).isFile()) files << f;
    for (const QString& dir : {QStringLiteral("trainer"), QStringLiteral("tbevents")}) {
        QDirIterator it(base.filePath(dir), QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext()) files << base.relativeFilePath(it.next());
    }
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

// The lines a source build runs before CMake, and the ones a reuse runs before it asks the trainer
// for its version: the profile's setup (modules: compiler, MPI, libtorch), then its PyTorch's.
QString environmentLines(const ClusterProfile& p)
{
    QString lines;
    if (!p.setup.trimmed().isEmpty()) lines += p.setup.trimmed() + QLatin1Char('\n');
    if (p.buildsAgainstPytorch() && !p.pytorchSetup.trimmed().isEmpty()) lines += p.pytorchSetup.trimmed() + QLatin1Char('\n');
    return lines;
}

// Removes a `ready` marker that stillReady() refused, before the folder is built or uploaded again.
Status dropMarker(Transport& t, const QString& dir)
{
    auto done = t.exec(QStringLiteral("rm -f %1").arg(shellQuote(dir + QStringLiteral("/ready"))), 60000, Idempotent::Yes);
    if (!done) return done.error();
    return Done{};
}

// A `ready` marker is trusted only while the trainer it stands for still runs there (under the
// environment it was built in) and prints exactly what the marker holds: a scratch purge that took
// the binary, a module that now loads another libtorch or compiler runtime, a marker left by hand or
// by a build cut short all fail it. True: reuse; false with `why`: build or upload again.
Expected<bool> stillReady(Transport& t, const QString& dir, const QString& trainer, const QString& environment, QString* why)
{
    auto marker = t.readAt(dir + QStringLiteral("/ready"), 0, 4096);
    if (!marker) {
        if (marker.error().code != ErrorCode::TransportNoFile) return marker.error();
        return false;  // never finished: nothing to say
    }
    const QString script = QStringLiteral("cd %1\n%2%3 --version").arg(shellQuote(dir), environment, shellQuote(trainer));
    auto run = t.exec(QStringLiteral("/bin/bash -c %1").arg(shellQuote(script)), 60000, Idempotent::Yes);
    if (!run) return run.error();
    const QString said = QString::fromUtf8(run->out).trimmed();
    if (run->exitCode != 0) {
        *why = QStringLiteral("its trainer no longer runs there (exit %1: %2)")
                   .arg(run->exitCode)
                   .arg(QString::fromUtf8(run->err + run->out).trimmed().left(300));
        return false;
    }
    if (run->out != *marker) {
        *why = QStringLiteral("its trainer now says \"%1\" where the marker says \"%2\"")
                   .arg(said.left(200), QString::fromUtf8(*marker).trimmed().left(200));
        return false;
    }
    return true;
}
}  // namespace

QString DeployResult::summary() const
{
    return QStringLiteral("trainer %1 %2: %3").arg(hash, reused ? QStringLiteral("reused") : QStringLiteral("deployed"), trainerPath);
}

DeployOptions deployOptionsFor(const ClusterProfile& profile)
{
    DeployOptions o;
    o.sourceDir = bundledTrainerSources();
    if (profile.trainerPrebuilt) o.prebuiltBinary = findLocalTrainer();
    return o;
}

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

QString deployBuildScript(const ClusterProfile& p, const QString& dir)
{
    QString script = QStringLiteral("set -e\ncd %1\n").arg(shellQuote(dir)) + environmentLines(p);
    QString prefix;
    if (p.buildsAgainstPytorch()) {
        // That PyTorch's libtorch (with its CUDA and NCCL), and the NCCL of its nvidia-nccl wheel when there is one.
        const QString python = shellQuote(p.pytorchInterpreter());
        script += QStringLiteral("torch_prefix=\"$(%1 -c 'import torch; print(torch.utils.cmake_prefix_path)')\" || "
                                 "{ echo 'scaledesk: trainer.pytorch.python' %1 'cannot import torch' >&2; exit 3; }\n"
                                 "echo \"scaledesk: building against $(%1 -c 'import torch; print(\"torch\", torch.__version__, "
                                 "\"CUDA\", torch.version.cuda)') at $torch_prefix\"\n"
                                 "NCCL_HOME=\"${NCCL_HOME:-$(%1 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])' "
                                 "2>/dev/null || true)}\"\nexport NCCL_HOME\n")
                      .arg(python);
        prefix = QStringLiteral(" -DCMAKE_PREFIX_PATH=\"$torch_prefix\"");
    }
    script += QStringLiteral("cmake -S src -B build -DCMAKE_BUILD_TYPE=Release -DSCALEDESK_BUILD_BACKEND=OFF -DSCALEDESK_BUILD_GUI=OFF "
                             "-DBUILD_TESTING=OFF%2\n"
                             "cmake --build build --target scaledesk-train -j %1\n"
                             "build/trainer/scaledesk-train --version > ready.part\nmv ready.part ready\n")
                  .arg(p.buildJobs)
                  .arg(prefix);
    return script;
}

namespace {
bool cancelRequested(const DeployOptions& o) { return o.stopRequested && o.stopRequested(); }

// A binary built here, uploaded under its content hash (reused when one is ready there).
Expected<DeployResult> deployPrebuilt(Transport& t, const DeployOptions& o, const QString& root, const ProgressFn& say)
{
    DeployResult result;
    QFile bin(o.prebuiltBinary);
    if (!bin.open(QIODevice::ReadOnly)) return Error{ErrorCode::DeployIo, bin.errorString(), o.prebuiltBinary};
    const QByteArray data = bin.readAll();
    result.hash = QString::fromLatin1(QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex().left(16));
    const QString dir = root + QStringLiteral("/bin-") + result.hash;
    result.trainerPath = dir + QStringLiteral("/scaledesk-train");
    QString why;
    auto ready = stillReady(t, dir, result.trainerPath, QString(), &why);
    if (!ready) return ready.error();
    if (!why.isEmpty()) {
        say(QStringLiteral("the upload of %1 is not usable: %2; uploading it again").arg(result.hash, why));
        if (auto ok = dropMarker(t, dir); !ok) return ok.error();
    }
    if (*ready) {
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
    if (auto ok = writeCurrent(t, root, result.trainerPath); !ok) return ok.error();
    return result;
}

// The trainer's sources into <dir>/src, file by file (a cancel between two files stops it).
Status uploadSources(Transport& t, const DeployOptions& o, const QStringList& files, const QString& dir, const ProgressFn& say)
{
    QStringList made;
    for (qsizetype i = 0; i < files.size(); ++i) {
        if (cancelRequested(o)) return Error{ErrorCode::DeployCancelled, QStringLiteral("the deploy was cancelled"), t.describe()};
        if (i == 0) say(QStringLiteral("uploading %1 source files to %2").arg(files.size()).arg(dir));
        say({QStringLiteral("uploading %1").arg(files[i]), i, files.size(), true});
        const QString& rel = files[i];
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
    return Done{};
}

// The build there, detached, followed until it ends (its CMake percentages are the progress).
Status buildThere(Transport& t, const ClusterProfile& p, const DeployOptions& o, const QString& dir, const ProgressFn& say)
{
    say(QStringLiteral("building there with the profile's setup lines (log: %1/build.log)").arg(dir));
    const QString script = deployBuildScript(p, dir);
    if (auto ok = t.writeFile(dir + QStringLiteral("/build.sh"), script.toUtf8(), 0755); !ok) return ok.error();
    // The build runs detached in its own process group (a dropped connection does not stop it) and
    // is followed through build.log: CMake's "[ 42%]" lines are the progress, build.rc the end.
    const QString qdir = shellQuote(dir);
    auto started = t.exec(QStringLiteral("cd %1 && rm -f build.rc && setsid /bin/bash -c '/bin/bash build.sh > build.log 2>&1; echo $? > "
                                         "build.rc' < /dev/null > /dev/null 2>&1 & echo $!")
                              .arg(qdir),
                          60000);
    if (!started) return started.error();
    const QString pid = QString::fromUtf8(started->out).trimmed();
    if (started->exitCode != 0 || pid.isEmpty() || !pid.toLongLong())
        return Error{ErrorCode::DeployBuild, QStringLiteral("the build did not start: %1").arg(QString::fromUtf8(started->err).trimmed()),
                     t.describe()};
    // The whole process group (CMake, the compilers); through bash, whose kill takes a group where
    // dash's rejects "-- -PGID".
    auto killBuild = [&] {
        (void)t.exec(QStringLiteral("/bin/bash -c 'kill -TERM -- -%1' 2>/dev/null; true").arg(pid), 30000, Idempotent::Yes);
    };
    QElapsedTimer clock;
    clock.start();
    int lastPercent = -1;
    for (;;) {
        if (cancelRequested(o)) {
            killBuild();
            return Error{ErrorCode::DeployCancelled,
                         QStringLiteral("the deploy was cancelled, and its build there was stopped (log: %1/build.log)").arg(dir),
                         t.describe()};
        }
        auto state = t.exec(QStringLiteral("cd %1 && { cat build.rc 2>/dev/null || echo running; } && "
                                           "{ grep -o '^\\[ *[0-9]*%\\]' build.log 2>/dev/null | tail -n 1; true; }")
                                .arg(qdir),
                            60000, Idempotent::Yes);
        if (!state) return state.error();
        const QStringList lines = QString::fromUtf8(state->out).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        const QString rc = lines.value(0).trimmed();
        if (rc != QLatin1String("running")) {
            auto tail = t.exec(QStringLiteral("tail -n 30 %1/build.log").arg(qdir), 60000, Idempotent::Yes);
            if (rc != QLatin1String("0"))
                return Error{ErrorCode::DeployBuild,
                             QStringLiteral("the trainer build failed (exit %1); the end of %2/build.log:\n%3")
                                 .arg(rc, dir, tail ? QString::fromUtf8(tail->out).trimmed() : tail.error().text()),
                             t.describe()};
            return Done{};
        }
        QString percent = lines.value(1);
        percent.remove(QLatin1Char('[')).remove(QLatin1Char(']')).remove(QLatin1Char('%'));
        const int pc = percent.trimmed().toInt();
        if (pc != lastPercent) {
            lastPercent = pc;
            say({QStringLiteral("building the trainer there: %1 %").arg(pc), pc, 100, true});
        }
        if (clock.elapsed() > 3LL * 3600 * 1000) {
            killBuild();
            return Error{ErrorCode::DeployBuild, QStringLiteral("the trainer build took over 3 hours; stopped it"), t.describe()};
        }
        QThread::msleep(o.pollMs);
    }
}

}  // namespace

Expected<DeployResult> deployTrainer(Transport& t, const ClusterProfile& p, const DeployOptions& o)
{
    auto say = [&](const ProgressStep& s) {
        if (o.progress) o.progress(s);
    };
    auto root = trainerRoot(t, p);
    if (!root) return root.error();
    if (!o.prebuiltBinary.isEmpty()) return deployPrebuilt(t, o, *root, say);

    // CMake reads ';' in a path as a list separator and cannot build there.
    if (root->contains(QLatin1Char(';')))
        return Error{ErrorCode::DeployPath,
                     QStringLiteral("CMake cannot build under a path that contains ';' (%1); choose another remote_root, or deploy a "
                                    "prebuilt trainer")
                         .arg(*root),
                     t.describe()};
    DeployResult result;
    const QStringList files = trainerSourceFiles(o.sourceDir);
    if (!files.contains(QStringLiteral("CMakeLists.txt")) || files.size() < 3)
        return Error{ErrorCode::DeploySources, QStringLiteral("no trainer sources here"), o.sourceDir};
    // Built with another compiler, MPI or libtorch is another trainer: the setup lines that choose
    // them there (and the PyTorch it builds against) are part of the hash, with the sources.
    result.hash = contentHash(o.sourceDir, files);
    const QString environment = environmentLines(p);
    const QString pytorch = p.buildsAgainstPytorch() ? p.pytorchInterpreter() : QString();
    if (!environment.isEmpty() || !pytorch.isEmpty())
        result.hash = QString::fromLatin1(
            QCryptographicHash::hash((result.hash + QLatin1Char('\n') + environment + QLatin1Char('\n') + pytorch).toUtf8(),
                                     QCryptographicHash::Sha256)
                .toHex()
                .left(16));
    const QString dir = *root + QLatin1Char('/') + result.hash;
    result.trainerPath = dir + QStringLiteral("/build/trainer/scaledesk-train");
    QString why;
    auto ready = stillReady(t, dir, result.trainerPath, environment, &why);
    if (!ready) return ready.error();
    if (*ready) {
        result.reused = true;
        say(QStringLiteral("trainer %1 already built there; reusing it").arg(result.hash));
        if (auto ok = writeCurrent(t, *root, result.trainerPath); !ok) return ok.error();
        return result;
    }
    if (!why.isEmpty()) {
        say(QStringLiteral("the build of %1 there is not usable: %2; building it again").arg(result.hash, why));
        if (auto ok = dropMarker(t, dir); !ok) return ok.error();
    }
    if (auto ok = uploadSources(t, o, files, dir, say); !ok) return ok.error();
    if (auto ok = buildThere(t, p, o, dir, say); !ok) return ok.error();
    if (auto ok = writeCurrent(t, *root, result.trainerPath); !ok) return ok.error();
    return result;
}

}  // namespace scaledesk
