// scaledesk plan --sweep S --nodes 1,2,4,… [--comm FILE…] [--target-loss L]: predicted epoch time,
// efficiency, node-hours and time-to-target per strategy, from what the sweep measured; and
// scaledesk plan-check --sweep S: the planner checked against the sweep (docs/planner.md).
#include "analysis/axisticks.h"
#include "analysis/plancheck.h"
#include "analysis/planner.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/terminal.h"
#include "cli/validators.h"

#include <CLI/CLI.hpp>

#include <QDir>

#include <cmath>
#include <limits>

namespace scaledesk::cli {

namespace {
// --comm, as plan and plan-check read it (loadSweepPlanInputs).
void addCommOption(CLI::App& app, std::vector<std::string>& files)
{
    app.add_option("--comm", files,
                   "JSON lines of `scaledesk-train bench-comm --out` (any number of files; default: the comm.jsonl of every completed "
                   "`scaledesk calibrate` job of the profile the sweep ran on)");
}

class PlanCommand final : public Command {
public:
    void add(CLI::App& app, SharedOptions&) override
    {
        m_app = app.add_subcommand("plan",
                                   "predict epoch time, speedup, efficiency, node-hours and (--target-loss) time-to-target at other "
                                   "node counts from what a sweep measured (its runs' step records and validation losses) and the "
                                   "timings of `scaledesk-train bench-comm`; writes plan.csv, plan.md and plots (docs/planner.md)");
        m_app->add_option("--sweep", m_sweep, "the sweep whose runs the model is fitted to")->required();
        m_app->add_option("--nodes", m_nodes, "node counts to predict, comma-separated")
            ->required()
            ->delimiter(',')
            ->check(positiveNumber());
        m_app->add_option("--ranks-per-node", m_ranksPerNode, "ranks per node (default: the most the sweep's runs had)")
            ->check(positiveNumber());
        addCommOption(*m_app, m_comm);
        m_app
            ->add_option("--strategies", m_strategies,
                         "strategies to predict, comma-separated: ddp, fused, zero1 or any the sweep ran (a run definition's "
                         "variants) (default: the sweep's)")
            ->delimiter(',');
        m_app->add_option("--scaling", m_scaling, "weak (local batch kept) or strong (global batch kept); auto: as the sweep ran")
            ->capture_default_str()
            ->check(CLI::IsMember({"auto", "weak", "strong"}));
        m_app->add_option("--epochs", m_epochs, "epochs that the node-hours and cost are for")
            ->capture_default_str()
            ->check(positiveNumber());
        m_app->add_option("--gpu-hour-price", m_price, "price of one GPU-hour (rank-hour): adds a cost column")->check(nonNegativeNumber());
        m_app
            ->add_option("--target-loss", m_target,
                         "validation loss to reach: adds time-to-target and node-hours to it, from a learning curve fitted to the "
                         "runs' validation losses with the global batch as a factor")
            ->check(positiveNumber());
        m_app->add_option("--warmup", m_warmup, "epochs at the start of each run left out of the averages")->capture_default_str();
        m_app->add_option("--out", m_out,
                          "write the plan into this folder (plan.csv, plan.md, and the plots in the --format's image formats)");
        m_app
            ->add_option("--format", m_formats,
                         "what --out writes, comma-separated: csv, md, png, svg, pdf (plots plan_epoch_time, plan_efficiency, "
                         "plan_node_hours, with --target-loss plan_time_to_target, and where the runs measured the gradient noise "
                         "scale plan_noise_scale)")
            ->capture_default_str();
    }
    bool chosen() const override { return m_app->parsed(); }
    int run(Context& ctx) override
    {
        PlanOptions o;
        for (int n : m_nodes) o.nodes << n;
        o.ranksPerNode = m_ranksPerNode;
        for (const std::string& s : m_strategies) o.strategies << q(s);
        o.scaling = m_scaling == "weak" ? PlanOptions::Scaling::Weak
            : m_scaling == "strong"     ? PlanOptions::Scaling::Strong
                                        : PlanOptions::Scaling::Auto;
        o.epochs = m_epochs;
        o.gpuHourPrice = m_price;
        o.targetLoss = m_target;
        // The output's formats are checked before the work, not after it.
        const QStringList formats = q(m_formats).split(QLatin1Char(','), Qt::SkipEmptyParts);
        if (!m_out.empty())
            if (auto ok = exportImageFormats(formats, QStringLiteral("plan"), bool(ctx.hooks.renderPlan)); !ok)
                return usageFail(ok.error());
        QStringList files;
        for (const std::string& f : m_comm) files << q(f);
        auto plan = planForSweep(ctx.store, q(m_sweep), m_warmup, files, o);
        if (!plan) return fail(plan.error());
        out(plan->markdown().trimmed());
        if (!m_out.empty()) {
            QStringList written;
            if (auto ok = writePlan(*plan, q(m_out), formats, ctx.hooks.renderPlan, &written); !ok) return fail(ok.error());
            for (const QString& w : written) out(QStringLiteral("wrote %1").arg(w));
        }
        return 0;
    }

private:
    CLI::App* m_app = nullptr;
    std::string m_sweep, m_out, m_scaling = "auto", m_formats = "csv,md,png,svg,pdf";
    std::vector<int> m_nodes;
    std::vector<std::string> m_comm, m_strategies;
    int m_ranksPerNode = 0, m_warmup = 1;
    double m_epochs = 1, m_price = std::numeric_limits<double>::quiet_NaN(), m_target = std::numeric_limits<double>::quiet_NaN();
};

// scaledesk plan-check --sweep S: the extrapolation protocol (analysis/plancheck.h).
class PlanCheckCommand final : public Command {
public:
    void add(CLI::App& app, SharedOptions&) override
    {
        m_app = app.add_subcommand("plan-check",
                                   "check the planner against a sweep: each size its runs measured, predicted from its runs at half "
                                   "the ranks or fewer on one node (and the timings), with the plan's range, beside what the size "
                                   "measured; prints the coverage of the ranges and their median half-width (docs/planner.md)");
        m_app->add_option("--sweep", m_sweep, "the sweep to check the planner against")->required();
        addCommOption(*m_app, m_comm);
        m_app->add_option("--warmup", m_warmup, "epochs at the start of each run left out of the averages")->capture_default_str();
        m_app->add_option("--out", m_out, "write check.md and check.csv into this folder");
    }
    bool chosen() const override { return m_app->parsed(); }
    int run(Context& ctx) override
    {
        QStringList files;
        for (const std::string& f : m_comm) files << q(f);
        auto check = checkSweepPlan(ctx.store, q(m_sweep), m_warmup, files);
        if (!check) return fail(check.error());
        out(check->markdown().trimmed());
        if (!m_out.empty()) {
            const QString dir = q(m_out);
            if (!QDir().mkpath(dir)) return fail(Error{ErrorCode::ExportIo, QStringLiteral("cannot create the folder"), dir});
            for (const auto& [name, text] :
                 {std::pair{QStringLiteral("check.md"), check->markdown()}, std::pair{QStringLiteral("check.csv"), check->csv()}}) {
                if (auto ok = writeText(dir + QLatin1Char('/') + name, text); !ok) return fail(ok.error());
                out(QStringLiteral("wrote %1").arg(QDir(dir).absoluteFilePath(name)));
            }
        }
        return 0;
    }

private:
    CLI::App* m_app = nullptr;
    std::string m_sweep, m_out;
    std::vector<std::string> m_comm;
    int m_warmup = 1;
};
}  // namespace

std::unique_ptr<Command> planCommand() { return std::make_unique<PlanCommand>(); }
std::unique_ptr<Command> planCheckCommand() { return std::make_unique<PlanCheckCommand>(); }

}  // namespace scaledesk::cli
