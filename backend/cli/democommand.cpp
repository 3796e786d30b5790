// scaledesk demo: a small scaling sweep on this machine, one run at a time, then its report.
#include "analysis/analysisinputs.h"
#include "analysis/scalingreport.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/terminal.h"
#include "runs/demo.h"

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
        auto demo = demoSweep(ctx.ws);
        if (!demo) return fail(demo.error());
        Connection c = ctx.connect(demo->profile);
        RunActions actions(ctx.store, *c.transport, *c.scheduler);
        const auto total = demo->runs.size();
        for (qsizetype i = 0; i < total; ++i) {
            const LaunchRequest& req = demo->runs[i];
            const QString id = req.points.first().runId;
            if (auto existing = ctx.store.load(id)) {
                out(QStringLiteral("demo: %1 exists (%2); kept as it is").arg(id, runStateName(existing->state)));
                continue;
            }
            progress(QStringLiteral("demo: "), {QStringLiteral("run %1 of %2: %3").arg(i + 1).arg(total).arg(id), i, total});
            auto launched = actions.launch(req);
            if (!launched) return fail(launched.error());
            if (const auto failed = launched->failed(); !failed.isEmpty()) return fail(failed.first().second);
            if (!ctx.waitForRuns({id}, 900, 1.0))
                return fail(Error{ErrorCode::DemoTimeout, QStringLiteral("the run did not end in 15 minutes"), id});
        }
        progressDone();
        const ScalingReport rep = loadSweepReport(ctx.store, DemoSweep::name());
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
