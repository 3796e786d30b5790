#include "runs/launchrequest.h"

#include "config/profiles.h"
#include "remote/localtransport.h"

#include <QDir>

#include <algorithm>

namespace scaledesk {

JobRequest jobRequest(const ClusterProfile& profile, const RunPoint& point, const SubmitOptions& o, const QString& remoteRoot)
{
    JobRequest r{profile, point, o.configName, o.trainerPath, o.trainerArgs, o.dataDir, o.command, QString()};
    if (!remoteRoot.isEmpty()) r.runDir = remoteRoot + QStringLiteral("/runs/") + point.runId;
    if (!remoteRoot.isEmpty() && r.dataDir.startsWith(remoteRoot + QLatin1Char('/')))
        r.dataDir = QDir(remoteRoot + QStringLiteral("/runs/") + point.runId).relativeFilePath(r.dataDir);
    return r;
}

QString previewScript(const LaunchRequest& r, const RunPoint& point)
{
    SubmitOptions o = r.options;
    if (o.trainerPath.isEmpty()) o.trainerPath = r.profile.trainerDeploy ? QStringLiteral("<deployed trainer>") : r.profile.trainerPath;
    if (r.makeData) o.dataDir = r.profile.remoteRoot + QStringLiteral("/data/generated");
    LocalTransport unused;  // rendering only; nothing is run
    JobRequest job = jobRequest(r.profile, point, o, QString());
    job.runDir = r.profile.remoteRoot + QStringLiteral("/runs/") + point.runId;
    return makeScheduler(r.profile, unused)->renderScript(job);
}

bool launchTrains(const LaunchRequest& r)
{
    return std::any_of(r.points.begin(), r.points.end(), [](const RunPoint& p) { return p.task.isEmpty(); });
}

QList<RunRecord> LaunchResult::submitted() const
{
    QList<RunRecord> runs;
    for (const SubmitOutcome& o : outcomes)
        if (o.followed()) runs << o.run;
    return runs;
}

QList<std::pair<QString, Error>> LaunchResult::failed() const
{
    QList<std::pair<QString, Error>> runs;
    for (const SubmitOutcome& o : outcomes)
        if (o.kind == SubmitOutcome::Kind::Failed) runs << std::pair{o.runId, o.error};
    return runs;
}

QStringList LaunchResult::notTried() const
{
    QStringList ids;
    for (const SubmitOutcome& o : outcomes)
        if (o.kind == SubmitOutcome::Kind::NotTried) ids << o.runId;
    return ids;
}

QStringList LaunchResult::unknown() const
{
    QStringList ids;
    for (const SubmitOutcome& o : outcomes)
        if (o.kind == SubmitOutcome::Kind::Unknown) ids << o.runId;
    return ids;
}

bool LaunchResult::complete() const
{
    return std::all_of(outcomes.begin(), outcomes.end(), [](const SubmitOutcome& o) { return o.followed(); });
}

QString LaunchResult::summary() const
{
    const auto runs = submitted();
    const auto bad = failed();
    const auto left = notTried();
    const auto lookedFor = unknown();
    QString s = complete() ? QStringLiteral("%1 run(s) submitted").arg(runs.size())
                           : QStringLiteral("%1 of %2 run(s) submitted").arg(runs.size()).arg(outcomes.size());
    if (!bad.isEmpty())
        s += QStringLiteral("; %1 failed (first: %2: %3)").arg(bad.size()).arg(bad.first().first, bad.first().second.text());
    if (!left.isEmpty()) s += QStringLiteral("; %1 not tried").arg(left.size());
    if (!lookedFor.isEmpty())
        s += QStringLiteral("; the outcome of %1 is unknown: its job is being looked for (first: %2)")
                 .arg(lookedFor.size())
                 .arg(lookedFor.first());
    return s;
}

}  // namespace scaledesk
