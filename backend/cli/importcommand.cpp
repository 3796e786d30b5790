// scaledesk import: runs made elsewhere (NERSC Python runs, TensorBoard log folders, ScaleDesk run
// folders) into the workspace, read-only.
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/terminal.h"
#include "runs/importer.h"

#include <CLI/CLI.hpp>

namespace scaledesk::cli {

namespace {
class ImportCommand final : public Command {
public:
    void add(CLI::App& app, SharedOptions&) override
    {
        m_app =
            app.add_subcommand("import",
                               "add runs made elsewhere to the workspace, read-only: a NERSC Python run folder (out.log and logs/ with its "
                               "TensorBoard event files), any TensorBoard log folder (each folder holding events.out.tfevents.* files is "
                               "one run, every scalar tag kept), a ScaleDesk run folder copied from elsewhere, or an itwinai "
                               "scalability folder (scalability-metrics/ in its PR #262 or run-id layout, or an MLflow file store "
                               "such as mllogs/mlflow: a run per strategy, GPU count and repetition, in a sweep)");
        m_app->add_option("paths", m_paths, "run folders, log folders, out.log or event files")->required();
        m_app->add_option("--sweep", m_sweep, "put the runs in this sweep, so that `scaledesk report` reads them");
        m_app->add_option(
            "--id", m_id,
            "the run id (one run only; default: a ScaleDesk run folder's name, else the folder's last three names joined by '-')");
        m_app->add_option("--ranks", m_ranks, "the world size of NERSC or TensorBoard runs, which their files do not record (default 1)")
            ->check(CLI::Range(1, 1 << 20));
        m_app
            ->add_option("--gpus-per-node", m_gpusPerNode,
                         "itwinai runs: GPUs per node where the files give only nodes or only GPUs (itwinai's plots assumed 4)")
            ->check(CLI::Range(1, 1024))
            ->capture_default_str();
    }
    bool chosen() const override { return m_app->parsed(); }
    int run(Context& ctx) override
    {
        QStringList paths;
        for (const std::string& p : m_paths) paths << q(p);
        ImportOptions options;
        options.sweep = q(m_sweep);
        options.id = q(m_id);
        options.ranks = m_ranks;
        options.gpusPerNode = m_gpusPerNode;
        auto imported = importRuns(ctx.store, paths, options, [](const ProgressStep& s) { progress(QStringLiteral("import: "), s); });
        progressDone();
        if (!imported) return fail(imported.error());
        for (const ImportedRun& r : *imported) {
            QStringList what;
            if (r.epochs > 0) what << QStringLiteral("%1 epoch(s)").arg(r.epochs);
            if (r.scalars > 0)
                what << QStringLiteral("%1 scalar(s) of %2 tag(s): %3")
                            .arg(r.scalars)
                            .arg(r.tags.size())
                            .arg(r.tags.join(QStringLiteral(", ")));
            out(QStringLiteral("imported %1 (%2) from %3: %4")
                    .arg(r.id, r.kind, r.source, what.isEmpty() ? QStringLiteral("its files") : what.join(QStringLiteral("; "))));
            for (const QString& w : r.warnings) err(QStringLiteral("warning: %1: %2").arg(r.id, w));
        }
        QStringList sweeps;
        for (const ImportedRun& r : *imported)
            if (!r.sweep.isEmpty() && !sweeps.contains(r.sweep)) sweeps << r.sweep;
        for (const QString& s : sweeps) out(QStringLiteral("in sweep %1: scaledesk report --sweep %1 --out DIR").arg(s));
        return 0;
    }

private:
    CLI::App* m_app = nullptr;
    std::vector<std::string> m_paths;
    std::string m_sweep, m_id;
    int m_ranks = 0, m_gpusPerNode = 4;
};
}  // namespace

std::unique_ptr<Command> importCommand() { return std::make_unique<ImportCommand>(); }

}  // namespace scaledesk::cli
