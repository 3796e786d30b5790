// scaledesk calibrate --profile P --nodes 1,2: the communication benchmark (`scaledesk-train
// bench-comm`) as jobs of the profile, through the lifecycle layer like any run; `scaledesk plan`
// reads their timings (docs/planner.md).
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/terminal.h"
#include "cli/validators.h"
#include "runs/runactions.h"
#include "runs/workspaceconfigs.h"

#include <CLI/CLI.hpp>

#include <QDateTime>
#include <QFile>

namespace scaledesk::cli {

namespace {
class CalibrateCommand final : public Command {
public:
    void add(CLI::App& app, SharedOptions& shared) override
    {
        m_app = app.add_subcommand("calibrate",
                                   "time the collectives (allreduce, reduce-scatter, allgather) and how much ranks slow each "
                                   "other's compute on a profile's nodes: one "
                                   "`scaledesk-train bench-comm` job per node count, recorded as runs of the calibration's sweep; "
                                   "`scaledesk plan` uses the profile's completed calibrations (docs/planner.md)");
        m_app->add_option("--profile", m_profile, "profile name")->capture_default_str();
        m_app->add_option("--nodes", m_nodes, "node counts, comma-separated (one job each)")
            ->delimiter(',')
            ->check(positiveNumber())
            ->capture_default_str();
        m_app->add_option("--ranks-per-node", m_ranks, "ranks per node (default: the profile's GPUs per node, else 2)")
            ->check(positiveNumber());
        m_app->add_option("--sizes", m_sizes,
                          "message sizes in bytes (K, M, G allowed), comma-separated; `scaledesk plan` lists the sizes a sweep's "
                          "strategies send (default: bench-comm's)");
        m_app->add_option("--ops", m_ops, "what to time, comma-separated (default: allreduce,reduce_scatter,allgather,compute)");
        m_app->add_option("--reps", m_reps, "timed repetitions per size")->check(positiveNumber());
        m_app
            ->add_option("--after-compute", m_afterCompute,
                         "seconds of compute before each collective when timing it a second time, as training meets it (no "
                         "barrier; the planner prefers these timings and takes the ranks' arrival wait from them); 0: behind a "
                         "barrier only")
            ->check(nonNegativeNumber())
            ->capture_default_str();
        CLI::Option* config =
            m_app->add_option("--config", m_config,
                              "a named config whose own training step (forward, loss, backward, Adam on batches from its own data "
                              "loader, its num_data_workers threads beside the compute as in training) is the benchmark's compute, "
                              "instead of a convolution kernel: the compute contention and the compute before each collective are "
                              "then the model's. Its relative data paths need --data or --make-data, as submit's; where the job "
                              "cannot open the data, the step runs on random batches and the timings say so");
        m_app->add_option("--config-file", m_configFile,
                          "with --config: the YAML of named configs (default: the workspace's configs/unet.yaml, as submit)");
        m_app->add_option("--local-batch", m_localBatch, "with --config: crops per step (default: its global_batch_size over the ranks)")
            ->check(positiveNumber())
            ->needs(config);
        m_app->add_option("--data", m_data, "with --config: folder on the cluster that each job's `data` links to (as submit's)")
            ->needs(config);
        m_app
            ->add_flag("--make-data", m_makeData,
                       "with --config: generate the cpu configs' data once under <remote root>/data/generated and link it (as "
                       "submit's)")
            ->needs(config);
        m_app->add_option("trainer_args", m_trainerArgs,
                          "extra scaledesk-train flags after --, as the training is given them (e.g. --num_data_workers 2)");
        m_app->add_option("--name", m_name, "the calibration's sweep name (default: calibrate-<profile>-<UTC time>)");
        m_app->add_option("--time", m_time, "time limit of each job (default: the profile's)");
        m_app->add_flag("--wait", m_wait, "poll until every job has ended, then print the timings; exit 1 unless all completed");
        m_app->add_option("--timeout", m_timeout, "with --wait: give up after this many seconds");
        addHostKeyFlag(*m_app, shared);
    }
    bool chosen() const override { return m_app->parsed(); }

    int run(Context& ctx) override
    {
        auto profile = findProfile(ctx.ws, q(m_profile));
        if (!profile) return fail(profile.error());
        LaunchRequest req;
        req.profile = *profile;
        if (!m_time.empty()) req.profile.slurm.timeLimit = q(m_time);
        const int ranks = m_ranks > 0 ? m_ranks : defaultRanksPerNode(*profile, 2);
        const QString sweep = m_name.empty()
            ? QStringLiteral("calibrate-%1-%2")
                  .arg(profile->name, QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss")))
            : q(m_name);
        for (int nodes : m_nodes) {
            RunPoint p;
            p.sweep = sweep;
            p.runId = QStringLiteral("%1-%2x%3").arg(sweep).arg(nodes).arg(ranks);
            p.nodes = nodes;
            p.ranksPerNode = ranks;
            p.task = QStringLiteral("bench-comm");
            p.localBatch = m_localBatch;
            req.points << p;
        }
        if (!m_config.empty()) {
            auto configs = m_configFile.empty() ? workspaceConfigFile(ctx.ws) : Expected<QString>(q(m_configFile));
            if (!configs) return fail(configs.error());
            req.options.configFile = *configs;
            req.options.configName = q(m_config);
            req.options.dataDir = q(m_data);
            req.makeData = m_makeData;
        }
        if (!m_sizes.empty()) req.options.trainerArgs << QStringLiteral("--sizes") << q(m_sizes);
        if (!m_ops.empty()) req.options.trainerArgs << QStringLiteral("--ops") << q(m_ops);
        if (m_reps > 0) req.options.trainerArgs << QStringLiteral("--reps") << QString::number(m_reps);
        req.options.trainerArgs << QStringLiteral("--after_compute") << QString::number(m_afterCompute);
        for (const auto& a : m_trainerArgs) req.options.trainerArgs << q(a);
        QStringList submitted;
        const int rc = ctx.launchRuns(req, m_wait, m_timeout, &submitted);
        if (m_wait)
            for (const QString& id : submitted)
                if (QFile::exists(ctx.ws.runDir(id) + QStringLiteral("/comm.jsonl")))
                    out(QStringLiteral("%1: %2/comm.jsonl").arg(id, ctx.ws.runDir(id)));
        return rc;
    }

private:
    CLI::App* m_app = nullptr;
    std::string m_profile = "local", m_sizes, m_ops, m_name, m_time, m_config, m_configFile, m_data;
    std::vector<std::string> m_trainerArgs;
    std::vector<int> m_nodes{1};
    int m_ranks = 0, m_reps = 0, m_timeout = 0, m_localBatch = 0;
    double m_afterCompute = 0.1;
    bool m_wait = false, m_makeData = false;
};
}  // namespace

std::unique_ptr<Command> calibrateCommand() { return std::make_unique<CalibrateCommand>(); }

}  // namespace scaledesk::cli
