// scaledesk tail RUN [-f] [--rank N]: a run's log and metric lines as they arrive.
#include "analysis/axisticks.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/terminal.h"
#include "config/profiles.h"
#include "runs/mirrorreader.h"
#include "runs/pollscheduler.h"

#include <CLI/CLI.hpp>

#include <QElapsedTimer>
#include <QThread>
#include <cmath>

namespace scaledesk::cli {

namespace {
// The logs a run's tail follows: its scheduler's output file, then the trainer's own logs.
QStringList logFiles(const RunRecord& r, int rank)
{
    if (rank > 0) return {QStringLiteral("rank-%1.log").arg(rank)};
    QStringList logs{QStringLiteral("job.out")};
    if (!r.jobId.isEmpty()) logs.prepend(QStringLiteral("slurm-%1.out").arg(r.jobId));
    return logs;
}

// A metric as a person reads it: 4 significant digits, "nan" for a missing or non-finite value.
QString shortNumber(double v) { return std::isfinite(v) ? formatNumber(v, 4) : QStringLiteral("nan"); }

class TailCommand final : public Command {
public:
    void add(CLI::App& app, SharedOptions& shared) override
    {
        m_app = app.add_subcommand("tail", "a run's log and metric lines as they arrive");
        m_app->add_option("run", m_run, "run id")->required();
        m_app->add_flag("-f,--follow", m_follow, "keep polling until the run ends");
        m_app->add_option("--rank", m_rank, "follow rank N's log instead of the job output");
        addHostKeyFlag(*m_app, shared);
    }
    bool chosen() const override { return m_app->parsed(); }
    int run(Context& ctx) override
    {
        const QString id = QString::fromStdString(m_run);
        if (!ctx.store.exists(id)) return fail(Error{ErrorCode::RunUnknown, QStringLiteral("no such run"), id});
        if (const auto record = ctx.store.load(id); record && (m_rank < 0 || m_rank >= record->nodes * record->ranksPerNode))
            return usageFail(Error{ErrorCode::Usage,
                                   QStringLiteral("--rank %1: the run has %2 rank(s), 0 to %3")
                                       .arg(m_rank)
                                       .arg(record->nodes * record->ranksPerNode)
                                       .arg(record->nodes * record->ranksPerNode - 1),
                                   id});
        MirrorReader reader(ctx.ws.runDir(id));
        bool local = false;
        if (const auto record = ctx.store.load(id))
            if (const auto profile = findProfile(ctx.ws, record->profile)) local = profile->isLocal();
        PollScheduler schedule(PollSettings().forProfile(local));
        QElapsedTimer clock;
        clock.start();
        std::size_t shownStep = 0;
        while (true) {
            auto before = ctx.store.load(id);
            schedule.started(clock.elapsed());
            const bool polled = !(before && isActive(before->state)) || ctx.pollRuns({id}, false);
            auto r = ctx.store.load(id);
            if (!r) return fail(r.error());
            const auto news = reader.read(logFiles(*r, m_rank));
            for (const auto& [file, line] : news.logLines) out(QString::fromUtf8(line));
            // New training steps as one line each: step, loss, learning rate, step time, to 4
            // significant digits as a person reads them (metrics.jsonl and compare's CSV keep them all).
            const Series* loss = reader.metrics().series(QStringLiteral("step/loss"));
            const Series* lr = reader.metrics().series(QStringLiteral("step/lr"));
            const Series* st = reader.metrics().series(QStringLiteral("step/step_s"));
            if (loss && shownStep > loss->size()) shownStep = 0;
            for (; loss && shownStep < loss->size(); ++shownStep) {
                const std::size_t i = shownStep;
                out(QStringLiteral("[metrics] step %1  loss %2  lr %3  step_s %4")
                        .arg(loss->steps()[i])
                        .arg(shortNumber(loss->values()[i]))
                        .arg(lr && i < lr->size() ? shortNumber(lr->values()[i]) : QString())
                        .arg(st && i < st->size() ? shortNumber(st->values()[i]) : QString()));
            }
            if (!m_follow) break;
            if (!isActive(r->state)) {
                out(QStringLiteral("[%1: %2]").arg(runStateName(r->state), r->message));
                break;
            }
            schedule.finished(clock.elapsed(),
                              PollScheduler::Outcome{polled, news.newPoints > 0 || !news.logLines.isEmpty(),
                                                     before && r->state != before->state, r->state == RunState::Running, true});
            QThread::msleep(static_cast<unsigned long>(qMax<qint64>(0, schedule.nextAt() - clock.elapsed())));
        }
        return 0;
    }

private:
    CLI::App* m_app = nullptr;
    std::string m_run;
    bool m_follow = false;
    int m_rank = 0;
};
}  // namespace

std::unique_ptr<Command> tailCommand() { return std::make_unique<TailCommand>(); }

}  // namespace scaledesk::cli
