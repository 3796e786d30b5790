// scaledesk demo: a small scaling sweep on this machine, one run at a time, then its report.
#include "analysis/analysisinputs.h"
#include "analysis/scalingreport.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/terminal.h"
#include "runs/deploy.h"
#include "runs/runactions.h"

#include <CLI/CLI.hpp>

namespace scaledesk::cli {

namespace {
class DemoCommand final : public Command {
public:
    void add(CLI::App& app, SharedOptions&) override
    {
        m_app = app.add_subcommand("demo",
                                   "a small scaling sweep on this machine (cpu-demo: 1 and 2 ranks × ddp and fused, "
                                   "one run at a time), then its report as CSV, Markdown, PNG, SVG and PDF");
        m_app->add_option("--out", m_out, "report folder (default: <workspace>/reports/demo)");
    }
    bool chosen() const override { return m_app->parsed(); }
    int run(Context& ctx) override
    {
        const ClusterProfile profile = builtinLocalProfile(ctx.ws);
        if (profile.trainerPath.isEmpty())
            return fail(Error{ErrorCode::TrainerMissing,
                              QStringLiteral("no scaledesk-train found next to scaledesk or on PATH; set SCALEDESK_TRAIN"), QString()});
        SweepSpec spec;
        spec.name = QStringLiteral("demo");
        spec.ranksPerNode = {1, 2};
        spec.strategies = {QStringLiteral("ddp"), QStringLiteral("fused")};
        auto points = expandSweep(spec);
        if (!points) return fail(points.error());
        Connection c = ctx.connect(profile);
        RunActions actions(ctx.store, *c.transport, *c.scheduler);
        // One run at a time: runs sharing two cores would measure each other, not the scaling.
        int n = 0;
        for (const RunPoint& pt : *points) {
            ++n;
            if (auto existing = ctx.store.load(pt.runId)) {
                out(QStringLiteral("demo: %1 exists (%2); kept as it is").arg(pt.runId, runStateName(existing->state)));
                continue;
            }
            out(QStringLiteral("demo: run %1 of %2: %3").arg(n).arg(points->size()).arg(pt.runId));
            LaunchRequest req;
            req.profile = profile;
            req.points = {pt};
            req.options.configFile = bundledTrainerSources() + QStringLiteral("/configs/unet.yaml");
            req.options.configName = QStringLiteral("cpu-demo");
            req.makeData = true;
            auto launched = actions.launch(req);
            if (!launched) return fail(launched.error());
            if (!launched->failed.isEmpty()) return fail(launched->failed.first().second);
            if (!ctx.waitForRuns({pt.runId}, 900, 1.0))
                return fail(Error{ErrorCode::DemoTimeout, QStringLiteral("the run did not end in 15 minutes"), pt.runId});
        }
        const ScalingReport rep = loadSweepReport(ctx.store, QStringLiteral("demo"));
        const QString dir = m_out.empty() ? ctx.ws.root() + QStringLiteral("/reports/demo") : QString::fromStdString(m_out);
        QStringList formats{QStringLiteral("csv"), QStringLiteral("md")};
        if (ctx.hooks.renderReport) formats << QStringLiteral("png") << QStringLiteral("svg") << QStringLiteral("pdf");
        out(QStringLiteral("demo: the report (%1 runs):").arg(rep.runs.size()));
        if (auto ok = writeReport(rep, dir, formats, ctx.hooks); !ok) return fail(ok.error());
        for (const QString& w : rep.warnings) err(QStringLiteral("warning: ") + w);
        return 0;
    }

private:
    CLI::App* m_app = nullptr;
    std::string m_out;
};
}  // namespace

std::unique_ptr<Command> demoCommand() { return std::make_unique<DemoCommand>(); }

}  // namespace scaledesk::cli
