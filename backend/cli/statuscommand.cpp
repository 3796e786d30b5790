// scaledesk status [RUN…] and scaledesk runs list
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/terminal.h"

#include <CLI/CLI.hpp>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace scaledesk::cli {

namespace {
class StatusCommand final : public Command {
public:
    void add(CLI::App& app, SharedOptions& shared) override
    {
        m_app = app.add_subcommand("status", "poll active runs, mirror their files and print their states");
        m_app->add_option("runs", m_runs, "run ids (default: every run)");
        m_app->add_flag("--wait", m_wait, "keep polling until the runs have ended");
        m_app->add_option("--timeout", m_timeout, "with --wait: give up after this many seconds");
        m_app->add_option("--interval", m_interval, "seconds between polls with --wait")->capture_default_str();
        m_app->add_flag("--history", m_history, "print every state a run went through (default when runs are named)");
        m_app->add_flag("--json", m_json, "print the run records as JSON");
        addHostKeyFlag(*m_app, shared);
    }
    bool chosen() const override { return m_app->parsed(); }
    int run(Context& ctx) override
    {
        QStringList ids;
        for (const auto& s : m_runs) ids << q(s);
        for (const QString& id : ids)
            if (!ctx.store.exists(id)) return fail(Error{ErrorCode::RunUnknown, QStringLiteral("no such run"), id});
        bool ok = true;
        if (m_wait) {
            ok = ctx.waitForRuns(ids, m_timeout, m_interval);
            if (!ok) err(QStringLiteral("scaledesk: --timeout reached with runs still active"));
        } else {
            ok = ctx.pollRuns(ids, false);
        }
        QList<RunRecord> records;
        if (ids.isEmpty())
            for (const auto& s : ctx.store.list()) ids << s.id;
        for (const QString& id : ids) {
            auto r = ctx.store.load(id);
            if (r) {
                records << *r;
            } else {
                err(QStringLiteral("scaledesk: ") + r.error().text());
                ok = false;  // a run that cannot be read is a failure to report, not an empty table
            }
        }
        if (m_json) {
            QJsonArray arr;
            for (const auto& r : records) arr.append(r.toJson());
            out(QString::fromUtf8(QJsonDocument(arr).toJson(QJsonDocument::Indented)).trimmed());
        } else {
            printRuns(records, m_history || !m_runs.empty());
        }
        return ok ? 0 : 1;
    }

private:
    CLI::App* m_app = nullptr;
    std::vector<std::string> m_runs;
    bool m_wait = false, m_json = false, m_history = false;
    int m_timeout = 0;
    double m_interval = 2.0;
};

class RunsCommand final : public Command {
public:
    void add(CLI::App& app, SharedOptions&) override
    {
        m_app = app.add_subcommand("runs", "the run index");
        m_app->require_subcommand(1);
        auto* list = m_app->add_subcommand("list", "every run of the workspace");
        list->add_flag("--json", m_json, "JSON output");
        list->add_option("--sweep", m_sweep, "only this sweep");
    }
    bool chosen() const override { return m_app->parsed(); }
    int run(Context& ctx) override
    {
        const QList<RunSummary> rows = ctx.store.list(q(m_sweep));
        if (m_json) {
            QJsonArray arr;
            for (const auto& s : rows)
                arr.append(QJsonObject{{QStringLiteral("id"), s.id},
                                       {QStringLiteral("sweep"), s.sweep},
                                       {QStringLiteral("profile"), s.profile},
                                       {QStringLiteral("strategy"), s.strategy},
                                       {QStringLiteral("nodes"), s.nodes},
                                       {QStringLiteral("ranks_per_node"), s.ranksPerNode},
                                       {QStringLiteral("state"), runStateName(s.state)},
                                       {QStringLiteral("job_id"), s.jobId},
                                       {QStringLiteral("created"), s.created},
                                       {QStringLiteral("updated"), s.updated},
                                       {QStringLiteral("origin"), s.origin},
                                       {QStringLiteral("detail"), s.message}});
            out(QString::fromUtf8(QJsonDocument(arr).toJson(QJsonDocument::Indented)).trimmed());
            return 0;
        }
        out(QStringLiteral("%1  %2  %3  %4  %5  %6")
                .arg(QStringLiteral("RUN"), -36)
                .arg(QStringLiteral("STATE"), -13)
                .arg(QStringLiteral("STRATEGY"), -8)
                .arg(QStringLiteral("RANKS"), -7)
                .arg(QStringLiteral("CREATED"), -24)
                .arg(QStringLiteral("DETAIL")));
        for (const auto& s : rows)
            out(QStringLiteral("%1  %2  %3  %4  %5  %6")
                    .arg(s.id, -36)
                    .arg(runStateName(s.state), -13)
                    .arg(s.strategy, -8)
                    .arg(QStringLiteral("%1x%2").arg(s.nodes).arg(s.ranksPerNode), -7)
                    .arg(s.created, -24)
                    .arg(s.message.left(100).simplified()));
        return 0;
    }

private:
    CLI::App* m_app = nullptr;
    bool m_json = false;
    std::string m_sweep;
};
}  // namespace

std::unique_ptr<Command> statusCommand() { return std::make_unique<StatusCommand>(); }
std::unique_ptr<Command> runsCommand() { return std::make_unique<RunsCommand>(); }

}  // namespace scaledesk::cli
