#pragma once
// A one-point launch on the SLURM sandbox whose job's content does not matter (tests of how a job is
// submitted and found): one task, one CPU, no MPI, no signal, 5 minutes, config "any" of
// `configFile` (which holds `any: {}`), and `trainer` as the program the job runs.

#include "runs/runactions.h"

namespace scaledesk::test {

inline LaunchRequest oneJobRequest(const QString& id, const QString& profile, const QString& remoteRoot, const QString& configFile,
                                   const QString& trainer = QStringLiteral("/bin/true"))
{
    LaunchRequest r;
    r.profile.name = profile;
    r.profile.kind = ProfileKind::SshSlurm;
    r.profile.remoteRoot = remoteRoot;
    r.profile.slurm.cpusPerTask = 1;
    r.profile.slurm.mpi = QStringLiteral("none");
    r.profile.slurm.signalSeconds = 0;
    r.profile.slurm.timeLimit = QStringLiteral("00:05:00");
    RunPoint p;
    p.runId = id;
    p.strategy = QStringLiteral("ddp");
    r.points = {p};
    r.options.configFile = configFile;
    r.options.configName = QStringLiteral("any");
    r.options.trainerPath = trainer;
    return r;
}

}  // namespace scaledesk::test
