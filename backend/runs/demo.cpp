#include "runs/demo.h"

#include "config/profiles.h"
#include "runs/deploy.h"

namespace scaledesk {

Expected<DemoSweep> demoSweep(const Workspace& workspace)
{
    DemoSweep demo;
    demo.profile = builtinLocalProfile(workspace);
    if (demo.profile.trainerPath.isEmpty())
        return Error{ErrorCode::TrainerMissing,
                     QStringLiteral("no scaledesk-train found next to scaledesk or on PATH; set SCALEDESK_TRAIN"), QString()};
    SweepSpec spec;
    spec.name = DemoSweep::name();
    spec.ranksPerNode = {1, 2};
    spec.strategies = {QStringLiteral("ddp"), QStringLiteral("fused")};
    const QString configFile = bundledTrainerSources() + QStringLiteral("/configs/unet.yaml");
    // Weak scaling, truly: the 2-rank runs train on twice the samples per step.
    if (auto ok = fillWeakLocalBatch(spec, configFile, QStringLiteral("cpu-demo")); !ok) return ok.error();
    auto points = expandSweep(spec);
    if (!points) return points.error();
    for (const RunPoint& pt : *points) {
        LaunchRequest req;
        req.profile = demo.profile;
        req.points = {pt};
        req.options.configFile = configFile;
        req.options.configName = QStringLiteral("cpu-demo");
        req.makeData = true;
        demo.runs << req;
    }
    return demo;
}

qsizetype nextDemoRun(const DemoSweep& demo, const Workspace& workspace)
{
    for (qsizetype i = 0; i < demo.runs.size(); ++i)
        if (!workspace.hasRun(demo.runs[i].points.first().runId)) return i;
    return -1;
}

}  // namespace scaledesk
