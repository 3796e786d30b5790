#include "config/clusterprofile.h"
#include "config/yamllocation.h"

#include <yaml-cpp/yaml.h>

#include <QFileInfo>
#include <QRegularExpression>

#include <functional>
#include <map>

namespace scaledesk {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

struct Failure {
    Error error;
};

class Reader {
public:
    explicit Reader(QString file) : m_file(std::move(file)) {}
    [[noreturn]] void fail(const YAML::Node& n, const QString& key, const QString& what) const
    {
        throw Failure{Error{ErrorCode::ProfileInvalid, QStringLiteral("key '%1': %2").arg(key, what), yamlLocation(m_file, n.Mark())}};
    }
    QString string(const YAML::Node& n, const QString& key) const
    {
        if (!n.IsScalar()) fail(n, key, QStringLiteral("expected a string"));
        return q(n.Scalar());
    }
    // A value that lands in an #SBATCH line: one word of printable characters, nothing a shell or
    // SLURM's directive parser could read as a second option.
    QString directive(const YAML::Node& n, const QString& key) const
    {
        const QString v = string(n, key);
        for (QChar c : v)
            if (c.isSpace() || c.category() == QChar::Other_Control)
                fail(n, key, QStringLiteral("must be one word without spaces or control characters"));
        return v;
    }
    QString timeLimit(const YAML::Node& n, const QString& key) const
    {
        const QString v = string(n, key);
        if (!isSlurmTimeLimit(v))
            fail(n, key, QStringLiteral("'%1' is not a SLURM time limit (MM, HH:MM:SS, D-HH[:MM[:SS]] or UNLIMITED)").arg(v));
        return v;
    }
    int integer(const YAML::Node& n, const QString& key, int min, int max) const
    {
        int v = 0;
        if (!n.IsScalar() || !YAML::convert<int>::decode(n, v) || v < min || v > max)
            fail(n, key, QStringLiteral("expected an integer from %1 to %2").arg(min).arg(max));
        return v;
    }
    bool boolean(const YAML::Node& n, const QString& key) const
    {
        bool v = false;
        if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) fail(n, key, QStringLiteral("expected true or false"));
        return v;
    }
    QStringList list(const YAML::Node& n, const QString& key) const
    {
        if (!n.IsSequence()) fail(n, key, QStringLiteral("expected a list"));
        QStringList out;
        for (const auto& e : n) out << string(e, key);
        return out;
    }
    // NAME: value pairs for `export NAME=value`: names of the shell's own form, values strings.
    QList<QPair<QString, QString>> environment(const YAML::Node& n, const QString& key) const
    {
        if (!n.IsMap()) fail(n, key, QStringLiteral("expected a mapping of variable names to values"));
        static const QRegularExpression name(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
        QList<QPair<QString, QString>> out;
        for (auto it = n.begin(); it != n.end(); ++it) {
            const QString var = q(it->first.Scalar());
            if (!name.match(var).hasMatch())
                fail(it->first, key, QStringLiteral("'%1' is not a variable name (letters, digits and _, not first a digit)").arg(var));
            out << qMakePair(var, string(it->second, key + QLatin1Char('.') + var));
        }
        return out;
    }
    template <typename Fields>
    void each(const YAML::Node& map, const QString& prefix, const Fields& fields) const
    {
        if (!map.IsMap()) fail(map, prefix, QStringLiteral("expected a mapping"));
        for (auto it = map.begin(); it != map.end(); ++it) {
            const QString key = prefix.isEmpty() ? q(it->first.Scalar()) : prefix + QLatin1Char('.') + q(it->first.Scalar());
            auto f = fields.find(it->first.Scalar());
            if (f == fields.end()) fail(it->first, key, QStringLiteral("unknown key"));
            f->second(it->second, key);
        }
    }

private:
    QString m_file;
};

using Field = std::function<void(const YAML::Node&, const QString&)>;

}  // namespace

QString profileKindName(ProfileKind kind) { return kind == ProfileKind::Local ? QStringLiteral("local") : QStringLiteral("ssh+slurm"); }

QString ClusterProfile::target() const
{
    if (isLocal()) return QStringLiteral("this machine");
    return QStringLiteral("%1%2:%3").arg(user.isEmpty() ? QString() : user + QLatin1Char('@'), host).arg(port);
}

bool isSlurmTimeLimit(const QString& value)
{
    if (value == QLatin1String("UNLIMITED") || value == QLatin1String("INFINITE")) return true;
    // The first field is a plain count (minutes, hours or days); the ones after it are clock fields.
    static const QRegularExpression re(QStringLiteral("^(?:([0-9]+)-)?([0-9]+)(?::([0-9]{1,2}))?(?::([0-9]{1,2}))?$"));
    const QRegularExpressionMatch m = re.match(value);
    if (!m.hasMatch()) return false;
    auto clock = [&](int field, int most) { return m.capturedLength(field) == 0 || m.captured(field).toInt() <= most; };
    if (!clock(3, 59) || !clock(4, 59)) return false;            // MM:SS, HH:MM:SS, D-HH:MM…: minutes and seconds
    if (m.capturedLength(1) > 0 && !clock(2, 23)) return false;  // D-HH…: hours of a day
    return true;
}

int defaultRanksPerNode(const ClusterProfile& profile, int cpuDefault)
{
    return profile.slurm.gpusPerNode > 0 ? profile.slurm.gpusPerNode : cpuDefault;
}

Status checkRanksPerNode(const ClusterProfile& profile, int ranksPerNode)
{
    const int gpus = profile.slurm.gpusPerNode;
    if (gpus <= 0 || ranksPerNode <= gpus) return Done{};
    return Error{ErrorCode::SweepInvalid,
                 QStringLiteral("ranks per node: %1 ranks on a node of profile %2, whose nodes have %3 GPU(s) "
                                "(slurm.gpus_per_node); each rank needs a GPU of its own: give %3 or fewer")
                     .arg(ranksPerNode)
                     .arg(profile.name)
                     .arg(gpus),
                 profile.name};
}

Expected<ClusterProfile> loadClusterProfile(const QString& path)
{
    if (!QFileInfo::exists(path)) return Error{ErrorCode::ProfileMissing, QStringLiteral("no such file"), path};
    YAML::Node root;
    try {
        root = YAML::LoadFile(path.toStdString());
    } catch (const YAML::Exception& e) {
        return Error{ErrorCode::ProfileYaml, QStringLiteral("malformed YAML: ") + q(e.msg), yamlLocation(path, e.mark)};
    }
    ClusterProfile p;
    bool haveKind = false;
    p.name = QFileInfo(path).completeBaseName();
    const Reader r(path);
    try {
        if (!root.IsMap()) r.fail(root, QStringLiteral("(top level)"), QStringLiteral("expected a mapping"));
        const std::map<std::string, Field> slurm = {
            {"partition", [&](auto& n, auto& k) { p.slurm.partition = r.directive(n, k); }},
            {"account", [&](auto& n, auto& k) { p.slurm.account = r.directive(n, k); }},
            {"qos", [&](auto& n, auto& k) { p.slurm.qos = r.directive(n, k); }},
            {"reservation", [&](auto& n, auto& k) { p.slurm.reservation = r.directive(n, k); }},
            {"constraint", [&](auto& n, auto& k) { p.slurm.constraint = r.directive(n, k); }},
            {"gpus_per_node", [&](auto& n, auto& k) { p.slurm.gpusPerNode = r.integer(n, k, 0, 64); }},
            {"cpus_per_task", [&](auto& n, auto& k) { p.slurm.cpusPerTask = r.integer(n, k, 1, 4096); }},
            {"time_limit", [&](auto& n, auto& k) { p.slurm.timeLimit = r.timeLimit(n, k); }},
            {"mpi", [&](auto& n, auto& k) { p.slurm.mpi = r.directive(n, k); }},
            {"requeue", [&](auto& n, auto& k) { p.slurm.requeue = r.boolean(n, k); }},
            {"signal_seconds", [&](auto& n, auto& k) { p.slurm.signalSeconds = r.integer(n, k, 0, 86400); }},
            {"command_timeout", [&](auto& n, auto& k) { p.slurm.commandTimeoutS = r.integer(n, k, 1, 3600); }},
            {"extra_directives",
             [&](auto& n, auto& k) {
                 if (!n.IsSequence()) r.fail(n, k, QStringLiteral("expected a list"));
                 for (const auto& e : n) p.slurm.extraDirectives << r.directive(e, k);
             }},
        };
        const std::map<std::string, Field> trainer = {
            {"path", [&](auto& n, auto& k) { p.trainerPath = r.string(n, k); }},
            {"deploy", [&](auto& n, auto& k) { p.trainerDeploy = r.boolean(n, k); }},
            {"prebuilt", [&](auto& n, auto& k) { p.trainerPrebuilt = r.boolean(n, k); }},
            {"build_jobs", [&](auto& n, auto& k) { p.buildJobs = r.integer(n, k, 1, 1024); }},
            {"pytorch",
             [&](auto& n, auto& k) {
                 const std::map<std::string, Field> pytorch = {
                     {"setup", [&](auto& v, auto& kk) { p.pytorchSetup = r.string(v, kk); }},
                     {"python", [&](auto& v, auto& kk) { p.pytorchPython = r.directive(v, kk); }},
                 };
                 r.each(n, k, pytorch);
                 if (!p.buildsAgainstPytorch()) r.fail(n, k, QStringLiteral("give setup (e.g. a module load line), python, or both"));
             }},
        };
        const std::map<std::string, Field> top = {
            {"name", [&](auto& n, auto& k) { p.name = r.string(n, k); }},
            {"kind",
             [&](auto& n, auto& k) {
                 const QString kind = r.string(n, k);
                 if (kind == profileKindName(ProfileKind::SshSlurm))
                     p.kind = ProfileKind::SshSlurm;
                 else if (kind == profileKindName(ProfileKind::Local))
                     p.kind = ProfileKind::Local;
                 else
                     r.fail(n, k, QStringLiteral("expected ssh+slurm or local, got '%1'").arg(kind));
                 haveKind = true;
             }},
            {"host", [&](auto& n, auto& k) { p.host = r.string(n, k); }},
            {"port", [&](auto& n, auto& k) { p.port = r.integer(n, k, 1, 65535); }},
            {"user", [&](auto& n, auto& k) { p.user = r.string(n, k); }},
            {"identity_file", [&](auto& n, auto& k) { p.identityFile = r.string(n, k); }},
            {"proxy_jump", [&](auto& n, auto& k) { p.proxyJump = r.string(n, k); }},
            {"known_hosts", [&](auto& n, auto& k) { p.knownHostsFile = r.string(n, k); }},
            {"remember_secrets", [&](auto& n, auto& k) { p.rememberSecrets = r.boolean(n, k); }},
            {"remote_root", [&](auto& n, auto& k) { p.remoteRoot = r.string(n, k); }},
            {"master_port", [&](auto& n, auto& k) { p.masterPort = r.integer(n, k, 0, 65535); }},
            {"slots", [&](auto& n, auto& k) { p.localSlots = r.integer(n, k, 0, 4096); }},
            {"setup", [&](auto& n, auto& k) { p.setup = r.string(n, k); }},
            {"env", [&](auto& n, auto& k) { p.environment = r.environment(n, k); }},
            {"slurm", [&](auto& n, auto& k) { r.each(n, k, slurm); }},
            {"trainer", [&](auto& n, auto& k) { r.each(n, k, trainer); }},
        };
        r.each(root, QString(), top);
        if (!haveKind) r.fail(root, QStringLiteral("kind"), QStringLiteral("is required (ssh+slurm or local)"));
        if (!p.isLocal() && p.host.isEmpty()) r.fail(root, QStringLiteral("host"), QStringLiteral("is required for an ssh+slurm profile"));
        if (!p.isLocal() && p.remoteRoot.isEmpty())
            r.fail(root, QStringLiteral("remote_root"), QStringLiteral("is required for an ssh+slurm profile"));
        if (!p.isLocal() && root["slots"])
            r.fail(root["slots"], QStringLiteral("slots"), QStringLiteral("is for local profiles (SLURM schedules a cluster's jobs)"));
        if (!p.isLocal() && p.trainerPath.isEmpty() && !p.trainerDeploy)
            r.fail(root, QStringLiteral("trainer"), QStringLiteral("give trainer.path (preinstalled) or trainer.deploy: true"));
    } catch (const Failure& f) {
        return f.error;
    } catch (const YAML::Exception& e) {
        return Error{ErrorCode::ProfileYaml, q(e.msg), yamlLocation(path, e.mark)};
    }
    return p;
}

QByteArray clusterProfileYaml(const ClusterProfile& p)
{
    const ClusterProfile d;
    const SlurmDefaults ds;
    YAML::Emitter e;
    e << YAML::BeginMap;
    auto put = [&](const char* key, const QString& value) {
        if (!value.isEmpty()) e << YAML::Key << key << YAML::Value << value.toStdString();
    };
    auto putInt = [&](const char* key, int value, int def) {
        if (value != def) e << YAML::Key << key << YAML::Value << value;
    };
    auto putBool = [&](const char* key, bool value, bool def) {
        if (value != def) e << YAML::Key << key << YAML::Value << value;
    };
    e << YAML::Key << "kind" << YAML::Value << profileKindName(p.kind).toStdString();
    put("host", p.host);
    putInt("port", p.port, d.port);
    put("user", p.user);
    put("identity_file", p.identityFile);
    put("proxy_jump", p.proxyJump);
    put("known_hosts", p.knownHostsFile);
    putBool("remember_secrets", p.rememberSecrets, d.rememberSecrets);
    put("remote_root", p.remoteRoot);
    putInt("master_port", p.masterPort, d.masterPort);
    putInt("slots", p.localSlots, d.localSlots);
    if (!p.setup.isEmpty()) e << YAML::Key << "setup" << YAML::Value << YAML::Literal << p.setup.toStdString();
    if (!p.environment.isEmpty()) {
        e << YAML::Key << "env" << YAML::Value << YAML::BeginMap;
        for (const auto& [var, value] : p.environment) e << YAML::Key << var.toStdString() << YAML::Value << value.toStdString();
        e << YAML::EndMap;
    }
    e << YAML::Key << "slurm" << YAML::Value << YAML::BeginMap;
    const SlurmDefaults& s = p.slurm;
    put("partition", s.partition);
    put("account", s.account);
    put("qos", s.qos);
    put("reservation", s.reservation);
    put("constraint", s.constraint);
    putInt("gpus_per_node", s.gpusPerNode, ds.gpusPerNode);
    putInt("cpus_per_task", s.cpusPerTask, ds.cpusPerTask);
    e << YAML::Key << "time_limit" << YAML::Value << s.timeLimit.toStdString();
    if (s.mpi != ds.mpi) put("mpi", s.mpi);
    putBool("requeue", s.requeue, ds.requeue);
    putInt("signal_seconds", s.signalSeconds, ds.signalSeconds);
    putInt("command_timeout", s.commandTimeoutS, ds.commandTimeoutS);
    if (!s.extraDirectives.isEmpty()) {
        e << YAML::Key << "extra_directives" << YAML::Value << YAML::BeginSeq;
        for (const QString& x : s.extraDirectives) e << x.toStdString();
        e << YAML::EndSeq;
    }
    e << YAML::EndMap;
    e << YAML::Key << "trainer" << YAML::Value << YAML::BeginMap;
    put("path", p.trainerPath);
    putBool("deploy", p.trainerDeploy, d.trainerDeploy);
    putBool("prebuilt", p.trainerPrebuilt, d.trainerPrebuilt);
    putInt("build_jobs", p.buildJobs, d.buildJobs);
    if (p.buildsAgainstPytorch()) {
        e << YAML::Key << "pytorch" << YAML::Value << YAML::BeginMap;
        if (!p.pytorchSetup.isEmpty()) e << YAML::Key << "setup" << YAML::Value << YAML::Literal << p.pytorchSetup.toStdString();
        put("python", p.pytorchPython);
        e << YAML::EndMap;
    }
    e << YAML::EndMap;
    e << YAML::EndMap;
    return QByteArray(e.c_str()) + '\n';
}

}  // namespace scaledesk
