#include "runs/clusterprobe.h"

#include "runs/runsubmitter.h"
#include "scheduler/shellquote.h"

#include <QFileInfo>
#include <QRegularExpression>

#include <algorithm>

namespace scaledesk {

int gpusInGres(const QString& gres)
{
    int gpus = 0;
    // Entries are "name[:type]:count[(extra)]"; commas separate entries (a "(S:0-1)" holds none).
    static const QRegularExpression entry(QStringLiteral("(?:^|,)gpu(?::[^:,()]+)?:(\\d+)"));
    auto it = entry.globalMatch(gres);
    while (it.hasNext()) gpus += it.next().captured(1).toInt();
    return gpus;
}

QList<PartitionInfo> parseSinfo(const QByteArray& text)
{
    QList<PartitionInfo> out;
    for (const QByteArray& raw : text.split('\n')) {
        const QStringList f = QString::fromUtf8(raw).trimmed().split(QLatin1Char('|'));
        if (f.size() < 5 || f[0].isEmpty()) continue;
        PartitionInfo p;
        p.name = f[0];
        if (p.name.endsWith(QLatin1Char('*'))) {
            p.isDefault = true;
            p.name.chop(1);
        }
        p.timeLimit = f[1].compare(QLatin1String("infinite"), Qt::CaseInsensitive) == 0 ? QStringLiteral("UNLIMITED") : f[1];
        bool ok = false;
        p.nodes = f[2].toInt(&ok);
        if (!ok) continue;
        QString cpus = f[3];
        cpus.remove(QLatin1Char('+'));  // "32+": heterogeneous nodes, at least 32
        p.cpusPerNode = cpus.toInt();
        p.gres = f[4] == QLatin1String("(null)") ? QString() : f[4];
        p.gpusPerNode = gpusInGres(p.gres);
        auto same = std::find_if(out.begin(), out.end(), [&](const PartitionInfo& o) { return o.name == p.name; });
        if (same == out.end()) {
            out << p;
            continue;
        }
        same->nodes += p.nodes;
        same->cpusPerNode = std::min(same->cpusPerNode, p.cpusPerNode);
        same->gpusPerNode = std::min(same->gpusPerNode, p.gpusPerNode);
        same->isDefault = same->isDefault || p.isDefault;
        if (!p.gres.isEmpty() && !same->gres.contains(p.gres))
            same->gres += (same->gres.isEmpty() ? QString() : QStringLiteral(",")) + p.gres;
    }
    return out;
}

void parseAssociations(const QByteArray& text, QStringList* accounts, QStringList* qos)
{
    for (const QByteArray& raw : text.split('\n')) {
        const QStringList f = QString::fromUtf8(raw).trimmed().split(QLatin1Char('|'));
        if (f.size() < 2 || f[0].isEmpty()) continue;
        if (!accounts->contains(f[0])) *accounts << f[0];
        for (const QString& q : f[1].split(QLatin1Char(','), Qt::SkipEmptyParts))
            if (!qos->contains(q.trimmed())) *qos << q.trimmed();
    }
}

Expected<ClusterFacts> probeCluster(Transport& t)
{
    ClusterFacts facts;
    // Bounded: a login node whose controller does not answer makes SLURM's commands wait.
    auto info =
        t.exec(QStringLiteral("uname -n; timeout 20 sinfo --version; timeout 30 sinfo -h -o '%P|%l|%D|%c|%G'"), 90000, Idempotent::Yes);
    if (!info) return info.error();
    const QList<QByteArray> lines = info->out.split('\n');
    facts.host = QString::fromUtf8(lines.value(0)).trimmed();
    facts.slurmVersion = QString::fromUtf8(lines.value(1)).trimmed();
    if (info->exitCode != 0 || !facts.slurmVersion.startsWith(QLatin1String("slurm")))
        return Error{ErrorCode::SchedulerUnavailable,
                     QStringLiteral("sinfo does not run there (is SLURM's client on the PATH of a login shell?): %1")
                         .arg(QString::fromUtf8(info->err).trimmed().left(300)),
                     t.describe()};
    facts.partitions = parseSinfo(info->out.mid(info->out.indexOf('\n', info->out.indexOf('\n') + 1) + 1));
    auto assoc = t.exec(QStringLiteral("timeout 20 sacctmgr -nP show assoc user=\"$(id -un)\" format=Account,QOS"), 60000, Idempotent::Yes);
    if (assoc && assoc->exitCode == 0) {
        parseAssociations(assoc->out, &facts.accounts, &facts.qos);
        if (facts.accounts.isEmpty()) facts.accountsNote = QStringLiteral("no associations for this user");
    } else {
        facts.accountsNote = assoc ? QStringLiteral("sacctmgr: %1").arg(QString::fromUtf8(assoc->err + assoc->out).trimmed().left(200))
                                   : assoc.error().text();
    }
    // Lmod sets LMOD_VERSION; Environment Modules answers `module --version` (on stderr).
    auto modules = t.exec(QStringLiteral("if [ -n \"$LMOD_VERSION\" ]; then echo \"Lmod $LMOD_VERSION\"; "
                                         "elif type module >/dev/null 2>&1; then module --version 2>&1 | head -n 1; fi"),
                          30000, Idempotent::Yes);
    if (modules) facts.moduleSystem = QString::fromUtf8(modules->out).trimmed().left(80);
    return facts;
}

TrainerBuild parseTrainerVersion(const QString& versionLine)
{
    TrainerBuild b;
    static const QRegularExpression re(QStringLiteral("\\(libtorch ([^,)]+)((?:, [^,)]+)*)\\)"));
    const auto m = re.match(versionLine);
    if (!m.hasMatch()) return b;
    b.parsed = true;
    b.libtorch = m.captured(1).trimmed();
    for (const QString& part : m.captured(2).split(QStringLiteral(", "), Qt::SkipEmptyParts)) {
        if (part.startsWith(QLatin1String("CUDA "))) b.cuda = part.mid(5).trimmed();
        if (part.startsWith(QLatin1String("NCCL "))) b.nccl = part.mid(5).trimmed();
    }
    return b;
}

QString TrainerBuild::describe() const
{
    if (!hasCuda()) return QStringLiteral("CPU-only libtorch %1").arg(libtorch);
    return QStringLiteral("CUDA libtorch %1 (CUDA %2), %3")
        .arg(libtorch, cuda, nccl.isEmpty() ? QStringLiteral("no NCCL") : QStringLiteral("NCCL ") + nccl);
}

QList<ProfileCheck> gpuChecks(const ClusterProfile& p, const TrainerBuild& b, int gpusOnNode, const QString& where)
{
    QList<ProfileCheck> out;
    const int asked = p.slurm.gpusPerNode;
    if (b.parsed) {
        QString detail = b.describe();
        bool ok = true;
        if (asked > 0 && !b.hasCuda()) {
            ok = false;
            detail += QStringLiteral(": the profile asks for %1 GPU(s) per node, which this trainer cannot use; deploy it against "
                                     "the cluster's PyTorch (trainer.pytorch) or a CUDA libtorch")
                          .arg(asked);
        } else if (asked > 0 && b.nccl.isEmpty()) {
            ok = false;
            detail += QStringLiteral(": ranks on GPUs need the nccl backend");
        }
        out << ProfileCheck{QStringLiteral("GPU build"), ok, detail};
    } else {
        out << ProfileCheck{QStringLiteral("GPU build"), asked == 0, QStringLiteral("the trainer's --version names no libtorch")};
    }
    if (gpusOnNode < 0) {
        out << ProfileCheck{QStringLiteral("GPUs per node"), asked == 0, QStringLiteral("unknown (%1)").arg(where)};
    } else {
        const bool ok = gpusOnNode >= asked;
        out << ProfileCheck{QStringLiteral("GPUs per node"), ok,
                            QStringLiteral("%1 (%2); the profile asks for %3%4")
                                .arg(gpusOnNode)
                                .arg(where)
                                .arg(asked)
                                .arg(ok ? QString() : QStringLiteral(": fewer than the profile's slurm.gpus_per_node"))};
    }
    return out;
}

namespace {

// GPUs on a node of the profile's partition (its default partition without one), from sinfo's GRES;
// on this machine (a local profile), nvidia-smi's list. -1 when it cannot be told; `where` says from what.
int gpusOnNode(Transport& t, const ClusterProfile& p, QString* where)
{
    if (p.isLocal()) {
        auto smi = t.exec(QStringLiteral("nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true"), 30000, Idempotent::Yes);
        *where = QStringLiteral("nvidia-smi on this machine");
        return smi ? QString::fromUtf8(smi->out).trimmed().toInt() : -1;
    }
    auto info = t.exec(QStringLiteral("timeout 30 sinfo -h -o '%P|%l|%D|%c|%G'"), 60000, Idempotent::Yes);
    if (!info || info->exitCode != 0) {
        *where = QStringLiteral("sinfo did not answer");
        return -1;
    }
    for (const PartitionInfo& part : parseSinfo(info->out))
        if (p.slurm.partition.isEmpty() ? part.isDefault : part.name == p.slurm.partition) {
            *where = QStringLiteral("partition %1, GRES %2").arg(part.name, part.gres.isEmpty() ? QStringLiteral("none") : part.gres);
            return part.gpusPerNode;
        }
    *where =
        p.slurm.partition.isEmpty() ? QStringLiteral("no default partition") : QStringLiteral("no partition %1").arg(p.slurm.partition);
    return -1;
}

}  // namespace

ProfileCheck pythonCheck(Transport& t, const ClusterProfile& p, const CommandRun& run)
{
    static const QRegularExpression python(QStringLiteral("^python[0-9.]*$"));
    const QString program = run.command.isEmpty() ? QString() : run.command.first();
    const QString interpreter = python.match(QFileInfo(program).fileName()).hasMatch() ? program : QStringLiteral("python3");
    const QString probe =
        QStringLiteral("import sys, torch, torch.distributed as d; print(sys.executable, 'Python', sys.version.split()[0], 'torch', "
                       "torch.__version__, 'CUDA ' + str(torch.version.cuda) if torch.cuda.is_available() else 'no CUDA', "
                       "'gloo' if d.is_available() and d.is_gloo_available() else 'no gloo', "
                       "'NCCL' if d.is_available() and d.is_nccl_available() else 'no NCCL')");
    // In a subshell, as the job runs them: the profile's setup, then the definition's.
    const QString script = QStringLiteral("(\n%1\n%2\n%3 -c %4\n) 2>&1")
                               .arg(p.setup.trimmed(), run.setup.trimmed(), shellQuote(interpreter), shellQuote(probe));
    auto r = t.exec(script, 120000, Idempotent::Yes);
    const QString what = QStringLiteral("Python and PyTorch for %1").arg(QFileInfo(run.file).fileName());
    if (!r) return {what, false, r.error().text()};
    const QString text = QString::fromUtf8(r->out + r->err).trimmed();
    if (r->exitCode != 0)
        return {what, false,
                QStringLiteral("%1 -c 'import torch' failed (exit %2): %3").arg(interpreter).arg(r->exitCode).arg(text.right(300))};
    return {what, true, text.section(QLatin1Char('\n'), -1)};
}

QList<ProfileCheck> testProfile(Transport& t, const ClusterProfile& p, bool connectOnly,
                                const std::function<void(const ProfileCheck&)>& each)
{
    QList<ProfileCheck> checks;
    auto check = [&](bool ok, const QString& what, const QString& detail) {
        checks << ProfileCheck{what, ok, detail};
        if (each) each(checks.last());
        return ok;
    };
    auto hello = t.exec(QStringLiteral("echo scaledesk-ok; uname -n"), 30000, Idempotent::Yes);
    if (!check(hello && hello->out.startsWith("scaledesk-ok"), QStringLiteral("connect to ") + t.describe(),
               hello ? QString::fromUtf8(hello->out).section(QLatin1Char('\n'), 1, 1) : hello.error().message))
        return checks;
    if (connectOnly) return checks;
    if (!p.isLocal()) {
        auto v = t.exec(QStringLiteral("timeout 20 sbatch --version && { timeout 20 squeue --me -h -o %i >/dev/null 2>&1 "
                                       "&& echo me-ok || echo me-missing; }"),
                        60000, Idempotent::Yes);
        const QString text = v ? QString::fromUtf8(v->out).trimmed() : v.error().text();
        check(v && v->exitCode == 0 && text.startsWith(QLatin1String("slurm")), QStringLiteral("SLURM"),
              text.section(QLatin1Char('\n'), 0, 0) +
                  (text.endsWith(QLatin1String("me-missing")) ? QStringLiteral(" (no squeue --me: polls use -u)") : QString()));
    }
    auto root = t.absolutePath(p.remoteRoot);
    bool rootOk = bool(root);
    QString rootDetail = root ? *root : root.error().text();
    if (rootOk) {
        auto ok = t.makeDirs(*root + QStringLiteral("/runs"));
        if (ok) ok = t.writeFile(*root + QStringLiteral("/.scaledesk-write-test"), "ok\n");
        if (!ok) {
            rootOk = false;
            rootDetail = ok.error().text();
        }
    }
    check(rootOk, QStringLiteral("remote root writable"), rootDetail);
    auto trainer = profileTrainer(t, p);
    if (!trainer) {
        check(false, QStringLiteral("trainer"), trainer.error().text());
    } else {
        auto v = t.exec(shellJoin({*trainer, QStringLiteral("--version")}), 60000, Idempotent::Yes);
        const bool runs = v && v->exitCode == 0;
        check(runs, QStringLiteral("trainer"),
              v ? *trainer + QStringLiteral(" → ") + QString::fromUtf8(v->out + v->err).trimmed().left(200) : v.error().text());
        if (runs) {
            QString where;
            const int gpus = gpusOnNode(t, p, &where);
            for (const ProfileCheck& k : gpuChecks(p, parseTrainerVersion(QString::fromUtf8(v->out)), gpus, where))
                check(k.ok, k.what, k.detail);
        }
    }
    return checks;
}

}  // namespace scaledesk
