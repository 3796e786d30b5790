#include "config/profiles.h"

#include "remote/localtransport.h"
#include "scheduler/localscheduler.h"
#include "scheduler/slurmscheduler.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSaveFile>
#include <QStandardPaths>
#include <QTemporaryFile>

namespace scaledesk {

namespace {
void fillLocalDefaults(ClusterProfile& p, const Workspace& ws)
{
    if (p.remoteRoot.isEmpty()) p.remoteRoot = ws.root() + QStringLiteral("/local");
    if (p.trainerPath.isEmpty()) p.trainerPath = findLocalTrainer();
}
}  // namespace

QString findLocalTrainer()
{
    const QString env = qEnvironmentVariable("SCALEDESK_TRAIN");
    if (!env.isEmpty()) return QFileInfo(env).absoluteFilePath();
    const QString app = QCoreApplication::instance() ? QCoreApplication::applicationDirPath() : QString();
    if (!app.isEmpty()) {
        for (const QString& rel : {QStringLiteral("/scaledesk-train"), QStringLiteral("/../trainer/scaledesk-train")}) {
            const QFileInfo fi(app + rel);
            if (fi.isExecutable()) return fi.canonicalFilePath();
        }
    }
    return QStandardPaths::findExecutable(QStringLiteral("scaledesk-train"));
}

std::unique_ptr<Scheduler> makeScheduler(const ClusterProfile& p, Transport& transport)
{
    if (p.isLocal()) return std::make_unique<LocalScheduler>(transport);
    return std::make_unique<SlurmScheduler>(transport, p.slurm.commandTimeoutS * 1000);
}

ProfileConnection connectProfile(const ClusterProfile& p, SshCallbacks callbacks)
{
    ProfileConnection c;
    if (p.isLocal()) {
        c.transport = std::make_unique<LocalTransport>();
        c.scheduler = makeScheduler(p, *c.transport);
        return c;
    }
    SshOptions o;
    o.host = p.host;
    o.port = p.port == 22 ? 0 : p.port;
    o.user = p.user;
    o.identityFile = p.identityFile;
    o.proxyJump = p.proxyJump;
    o.knownHostsFile = p.knownHostsFile;
    o.sshConfigFile = qEnvironmentVariable("SCALEDESK_SSH_CONFIG");
    c.transport = std::make_unique<SshTransport>(o, std::move(callbacks));
    c.scheduler = makeScheduler(p, *c.transport);
    return c;
}

ClusterProfile builtinLocalProfile(const Workspace& ws)
{
    ClusterProfile p;
    p.name = QStringLiteral("local");
    p.kind = ProfileKind::Local;
    p.slurm.cpusPerTask = 1;
    fillLocalDefaults(p, ws);
    return p;
}

QList<ProfileEntry> listProfiles(const Workspace& ws)
{
    QList<ProfileEntry> out;
    bool haveLocal = false;
    const QDir dir(ws.profilesDir());
    for (const QString& f : dir.entryList({QStringLiteral("*.yaml")}, QDir::Files, QDir::Name)) {
        ProfileEntry e;
        e.file = dir.filePath(f);
        e.name = QFileInfo(f).completeBaseName();
        auto p = loadClusterProfile(e.file);
        if (p) {
            ClusterProfile prof = *p;
            prof.name = e.name;  // the file name is the profile's name in a workspace
            if (prof.isLocal()) fillLocalDefaults(prof, ws);
            e.profile = prof;
        } else {
            e.error = p.error();
        }
        haveLocal = haveLocal || e.name == QLatin1String("local");
        out << e;
    }
    if (!haveLocal) {
        ProfileEntry e;
        e.name = QStringLiteral("local");
        e.profile = builtinLocalProfile(ws);
        out.prepend(e);
    }
    return out;
}

Expected<ClusterProfile> findProfile(const Workspace& ws, const QString& name)
{
    QStringList names;
    for (const auto& e : listProfiles(ws)) {
        if (e.name == name) {
            if (e.profile) return *e.profile;
            return e.error;
        }
        names << e.name;
    }
    return Error{ErrorCode::ProfileUnknown,
                 QStringLiteral("no profile named '%1' (have: %2; add one with `scaledesk profiles add FILE`)")
                     .arg(name, names.join(QStringLiteral(", "))),
                 ws.profilesDir()};
}

Expected<ClusterProfile> addProfile(const Workspace& ws, const QString& file, const QString& name0)
{
    auto p = loadClusterProfile(file);
    if (!p) return p.error();
    // The profile's own `name` key, when it has one, else its file's name; a --name that
    // contradicts the key is refused rather than one of them silently ignored.
    const bool keyed = p->name != QFileInfo(file).completeBaseName();
    if (!name0.isEmpty() && keyed && p->name != name0)
        return Error{ErrorCode::ProfileName,
                     QStringLiteral("the file names its profile '%1' (key `name`), and the name asked for is '%2': change or remove one")
                         .arg(p->name, name0),
                     file};
    const QString name = name0.isEmpty() ? p->name : name0;
    static const QRegularExpression safe(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"));
    if (!safe.match(name).hasMatch())
        return Error{ErrorCode::ProfileName, QStringLiteral("a profile name is 1-64 letters, digits, '.', '_' or '-'"), name};
    if (auto ok = ws.ensure(); !ok) return ok.error();
    const QString target = ws.profilesDir() + QLatin1Char('/') + name + QStringLiteral(".yaml");
    if (QFile::exists(target)) return Error{ErrorCode::ProfileExists, QStringLiteral("a profile with this name exists"), target};
    if (!QFile::copy(file, target)) return Error{ErrorCode::ProfileIo, QStringLiteral("cannot copy the profile"), target};
    QFile::setPermissions(target, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    ClusterProfile out = *p;
    out.name = name;
    return out;
}

Expected<QString> saveProfile(const Workspace& ws, const ClusterProfile& profile, bool replace)
{
    static const QRegularExpression safe(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"));
    if (!safe.match(profile.name).hasMatch())
        return Error{ErrorCode::ProfileName, QStringLiteral("a profile name is 1-64 letters, digits, '.', '_' or '-'"), profile.name};
    if (profile.name == QLatin1String("local") && !profile.isLocal())
        return Error{ErrorCode::ProfileName, QStringLiteral("'local' is this machine's profile; choose another name"), profile.name};
    if (auto ok = ws.ensure(); !ok) return ok.error();
    const QString target = ws.profilesDir() + QLatin1Char('/') + profile.name + QStringLiteral(".yaml");
    if (!replace && QFile::exists(target))
        return Error{ErrorCode::ProfileExists, QStringLiteral("a profile with this name exists"), target};
    QSaveFile f(target);
    f.setDirectWriteFallback(false);
    if (!f.open(QIODevice::WriteOnly)) return Error{ErrorCode::ProfileIo, f.errorString(), target};
    const QByteArray yaml = clusterProfileYaml(profile);
    f.write(yaml);
    // Checked as `profiles add` checks a file, before it takes the name.
    QTemporaryFile check(QDir::tempPath() + QStringLiteral("/scaledesk-profile-XXXXXX.yaml"));
    if (!check.open()) return Error{ErrorCode::ProfileIo, check.errorString(), QDir::tempPath()};
    check.write(yaml);
    check.flush();
    if (auto loaded = loadClusterProfile(check.fileName()); !loaded) {
        f.cancelWriting();
        Error e = loaded.error();
        e.location.replace(check.fileName(), target);
        return e;
    }
    if (!f.commit()) return Error{ErrorCode::ProfileIo, QStringLiteral("cannot write: ") + f.errorString(), target};
    QFile::setPermissions(target, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    return target;
}

}  // namespace scaledesk
