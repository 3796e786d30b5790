// scaledesk report --sweep S --out DIR and scaledesk compare RUN… --out FILE
#include "analysis/analysisinputs.h"
#include "analysis/comparison.h"
#include "analysis/epochscsv.h"
#include "analysis/scalingreport.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/terminal.h"

#include <CLI/CLI.hpp>

#include <QFileInfo>

#include <cmath>
#include <limits>

namespace scaledesk::cli {

namespace {
// A sweep name that names no run: said so, with the sweeps there are.
Error noSuchSweep(const RunStore& store, const QString& sweep)
{
    QStringList sweeps;
    for (const RunSummary& r : store.list())
        if (!r.sweep.isEmpty() && !sweeps.contains(r.sweep)) sweeps << r.sweep;
    sweeps.sort();
    return Error{ErrorCode::Usage,
                 QStringLiteral("no runs in sweep '%1' (%2)")
                     .arg(sweep,
                          sweeps.isEmpty() ? QStringLiteral("the workspace has no sweeps")
                                           : QStringLiteral("the sweeps: ") + sweeps.mid(0, 10).join(QStringLiteral(", "))),
                 QString()};
}

class ReportCommand final : public Command {
public:
    void add(CLI::App& app, SharedOptions& shared) override
    {
        m_app = app.add_subcommand("report", "the scaling report of a sweep: CSV tables, a Markdown summary and the plots");
        m_app->add_option("--sweep", m_sweep, "sweep name")->required();
        m_app->add_option("--out", m_out, "folder for groups.csv, runs.csv and report.md")->required();
        m_app
            ->add_option("--warmup", m_warmup,
                         "epochs at the start of each run left out of the averages (default: 1; 0 for runs imported from itwinai, "
                         "whose report averages every epoch)")
            ->check(CLI::Range(0, 1 << 20));
        m_app->add_flag("--include-validation", m_includeValidation,
                        "epoch time = training + validation (wall_s); by default it is the training time alone (train_s), as NERSC's "
                        "\"Time taken for epoch\" and itwinai define it, with validation its own column");
        m_app->add_option("--target", m_target, "validation loss for time-to-target (default: the lowest loss every run reached)");
        m_app
            ->add_option("--format", m_formats,
                         "comma-separated: csv (groups.csv, runs.csv), md (report.md), png, svg, pdf (the six plots, a seventh, "
                         "noise_scale, where the trainer measured the gradient noise scale, and scaling_report.<format> with all "
                         "of them on one page)")
            ->capture_default_str();
        addHostKeyFlag(*m_app, shared);
    }
    bool chosen() const override { return m_app->parsed(); }
    int run(Context& ctx) override
    {
        const QString sweep = q(m_sweep);
        const QStringList formats = q(m_formats).split(QLatin1Char(','), Qt::SkipEmptyParts);
        if (auto ok = exportImageFormats(formats, QStringLiteral("report"), bool(ctx.hooks.renderReport)); !ok)
            return usageFail(ok.error());
        QStringList ids;
        for (const auto& row : ctx.store.list(sweep)) ids << row.id;
        if (ids.isEmpty()) return fail(noSuchSweep(ctx.store, sweep));  // no empty report for a name that names nothing
        ctx.pollRuns(ids, false);                                       // finished epochs first
        ReportOptions o;
        o.warmupEpochs = m_warmup;
        o.includeValidation = m_includeValidation;
        if (!std::isnan(m_target)) o.targetLoss = m_target;
        const ScalingReport rep = loadSweepReport(ctx.store, sweep, o);
        if (auto ok = writeReport(rep, q(m_out), formats, ctx.hooks); !ok) return fail(ok.error());
        for (const QString& w : rep.warnings) err(QStringLiteral("warning: ") + w);
        return 0;
    }

private:
    CLI::App* m_app = nullptr;
    std::string m_sweep, m_out, m_formats = "csv,md";
    int m_warmup = -1;
    bool m_includeValidation = false;
    double m_target = std::numeric_limits<double>::quiet_NaN();
};

class CompareCommand final : public Command {
public:
    void add(CLI::App& app, SharedOptions&) override
    {
        m_app = app.add_subcommand("compare", "runs side by side: final and best losses and the config keys that differ");
        m_app->add_option("runs", m_runs, "run ids")->required();
        m_app
            ->add_option("--out", m_out,
                         "file to write: .csv (the table, or --series points), or .png/.svg/.pdf (a chart of --series, default Loss/valid)")
            ->required();
        m_app->add_option("--series", m_series, "write this tag's points instead (e.g. 'Loss/valid', 'step/loss')");
        m_app->add_option("--x", m_x, "x of --series: step, relative (seconds since each run started) or wall (Unix time)")
            ->check(CLI::IsMember({"step", "relative", "wall"}))
            ->capture_default_str();
        m_app->add_option("--smoothing", m_smoothing, "TensorBoard smoothing weight for --series, 0 to 0.999 (0 = raw)")
            ->check(CLI::Range(0.0, 0.999));
        m_app->add_option("--from", m_from, "--series: only x at or after this");
        m_app->add_option("--to", m_to, "--series: only x at or before this");
    }
    bool chosen() const override { return m_app->parsed(); }
    int run(Context& ctx) override
    {
        QStringList warnings;
        QStringList ids;
        for (const auto& id : m_runs) ids << q(id);
        auto loaded = loadCompareRuns(ctx.store, ids, &warnings);
        if (!loaded) return fail(loaded.error());
        const std::vector<CompareRun>& runsIn = *loaded;
        const QString outPath = q(m_out);
        const QString suffix = QFileInfo(outPath).suffix().toLower();
        const XAxis axis = m_x == "relative" ? XAxis::RelativeTime : m_x == "wall" ? XAxis::WallTime : XAxis::Step;
        if (suffix == QLatin1String("png") || suffix == QLatin1String("svg") || suffix == QLatin1String("pdf")) {
            if (!ctx.hooks.renderSeries)
                return fail(Error{ErrorCode::Usage,
                                  QStringLiteral("this scaledesk was built without charts (SCALEDESK_BUILD_GUI=OFF): use .csv"), outPath});
            const QString tag = m_series.empty() ? QStringLiteral("Loss/valid") : q(m_series);
            if (auto ok = ctx.hooks.renderSeries(runsIn, tag, axis, m_smoothing, outPath); !ok) return fail(ok.error());
            out(QFileInfo(outPath).absoluteFilePath());
            for (const QString& w : warnings) err(QStringLiteral("warning: ") + w);
            return 0;
        }
        QString text;
        if (!m_series.empty()) {
            QList<const CompareRun*> ptrs;
            for (const auto& c : runsIn) ptrs << &c;
            text = seriesCsv(ptrs, q(m_series), axis, m_smoothing, m_from, m_to);
            for (const auto& c : runsIn)
                if (!c.metrics.series(q(m_series))) warnings << QStringLiteral("%1: no '%2' values").arg(c.record.id, q(m_series));
        } else {
            const Comparison cmp = compareRuns(runsIn);
            text = cmp.csv();
            warnings << cmp.warnings;
            for (int i = 0; i < cmp.runIds.size(); ++i) {
                const TagSummary v = cmp.summaries[i].value(QStringLiteral("Loss/valid"));
                out(QStringLiteral("%1  final val %2  best val %3 (step %4)")
                        .arg(cmp.runIds[i], -36)
                        .arg(csvNumber(v.finalValue), -10)
                        .arg(csvNumber(v.bestValue), -10)
                        .arg(csvNumber(v.bestStep)));
            }
            if (!cmp.differingKeys.isEmpty())
                out(QStringLiteral("config keys that differ: ") + cmp.differingKeys.join(QStringLiteral(", ")));
        }
        if (auto ok = writeText(outPath, text); !ok) return fail(ok.error());
        out(QFileInfo(outPath).absoluteFilePath());
        for (const QString& w : warnings) err(QStringLiteral("warning: ") + w);
        return 0;
    }

private:
    CLI::App* m_app = nullptr;
    std::vector<std::string> m_runs;
    std::string m_out, m_series, m_x = "step";
    double m_smoothing = 0, m_from = -std::numeric_limits<double>::infinity(), m_to = std::numeric_limits<double>::infinity();
};
}  // namespace

std::unique_ptr<Command> reportCommand() { return std::make_unique<ReportCommand>(); }
std::unique_ptr<Command> compareCommand() { return std::make_unique<CompareCommand>(); }

}  // namespace scaledesk::cli
