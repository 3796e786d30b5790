// scaledesk profiles list | add | test
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/terminal.h"
#include "runs/runsubmitter.h"
#include "scheduler/shellquote.h"

#include <CLI/CLI.hpp>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace scaledesk::cli {

namespace {
class ProfilesCommand final : public Command {
public:
    void add(CLI::App& app, SharedOptions& shared) override
    {
        m_app = app.add_subcommand("profiles", "list, add and test cluster profiles");
        m_app->require_subcommand(1);
        m_list = m_app->add_subcommand("list", "the workspace's profiles and whether they load");
        m_list->add_flag("--json", m_json, "JSON output");
        m_add = m_app->add_subcommand("add", "validate a profile YAML and copy it into the workspace");
        m_add->add_option("file", m_file, "profile YAML (keys: docs/profiles.md)")->required();
        m_add->add_option("--name", m_name, "profile name (default: the file's base name)");
        m_test = m_app->add_subcommand("test", "connect and check the scheduler, the remote root and the trainer");
        m_test->add_option("name", m_testName, "profile name")->required();
        m_test->add_flag("--connect-only", m_connectOnly, "only connect and log in (host key, keys, 2FA)");
        addHostKeyFlag(*m_test, shared);
    }
    bool chosen() const override { return m_app->parsed(); }
    int run(Context& ctx) override
    {
        if (m_list->parsed()) return list(ctx);
        if (m_add->parsed()) {
            auto p = addProfile(ctx.ws, q(m_file), q(m_name));
            if (!p) return fail(p.error());
            out(QStringLiteral("added profile %1 (%2)").arg(p->name, profileKindName(p->kind)));
            return 0;
        }
        return test(ctx);
    }

private:
    int list(Context& ctx)
    {
        QJsonArray arr;
        for (const auto& e : listProfiles(ctx.ws)) {
            const QString target = e.profile ? e.profile->target() : QString();
            const QString kind = e.profile ? profileKindName(e.profile->kind) : QString();
            if (m_json)
                arr.append(QJsonObject{{QStringLiteral("name"), e.name},
                                       {QStringLiteral("file"), e.file},
                                       {QStringLiteral("kind"), kind},
                                       {QStringLiteral("target"), target},
                                       {QStringLiteral("error"), e.profile ? QString() : e.error.text()}});
            else
                out(QStringLiteral("%1  %2  %3  %4")
                        .arg(e.name, -16)
                        .arg(e.profile ? kind : QStringLiteral("?"), -9)
                        .arg(target, -28)
                        .arg(e.profile ? QStringLiteral("ok") : QStringLiteral("error: ") + e.error.text()));
        }
        if (m_json) out(QString::fromUtf8(QJsonDocument(arr).toJson(QJsonDocument::Indented)).trimmed());
        return 0;
    }

    int test(Context& ctx)
    {
        auto p = findProfile(ctx.ws, q(m_testName));
        if (!p) return fail(p.error());
        Connection c = ctx.connect(*p);
        bool allOk = true;
        auto check = [&](bool ok, const QString& what, const QString& detail) {
            out(QStringLiteral("%1 %2%3").arg(ok ? QStringLiteral("ok  ") : QStringLiteral("FAIL"), what,
                                              detail.isEmpty() ? QString() : QStringLiteral(": ") + detail));
            allOk = allOk && ok;
            return ok;
        };
        auto hello = c.transport->exec(QStringLiteral("echo scaledesk-ok; uname -n"), 30000, Idempotent::Yes);
        if (!check(hello && hello->out.startsWith("scaledesk-ok"), QStringLiteral("connect to ") + c.transport->describe(),
                   hello ? QString::fromUtf8(hello->out).section(QLatin1Char('\n'), 1, 1) : hello.error().text()))
            return 1;
        c.rememberSecrets();
        if (m_connectOnly) return 0;
        if (!p->isLocal()) {
            // Bounded: a login node whose controller does not answer makes SLURM's commands wait.
            auto v = c.transport->exec(QStringLiteral("timeout 20 sbatch --version && { timeout 20 squeue --me -h -o %i >/dev/null 2>&1 "
                                                      "&& echo me-ok || echo me-missing; }"),
                                       60000, Idempotent::Yes);
            const QString text = v ? QString::fromUtf8(v->out).trimmed() : v.error().text();
            check(v && v->exitCode == 0 && text.startsWith(QLatin1String("slurm")), QStringLiteral("SLURM"),
                  text.section(QLatin1Char('\n'), 0, 0) +
                      (text.endsWith(QLatin1String("me-missing")) ? QStringLiteral(" (no squeue --me: polls use -u)") : QString()));
        }
        auto root = c.transport->absolutePath(p->remoteRoot);
        bool rootOk = bool(root);
        QString rootDetail = root ? *root : root.error().text();
        if (rootOk) {
            auto ok = c.transport->makeDirs(*root + QStringLiteral("/runs"));
            if (ok) ok = c.transport->writeFile(*root + QStringLiteral("/.scaledesk-write-test"), "ok\n");
            if (!ok) {
                rootOk = false;
                rootDetail = ok.error().text();
            }
        }
        check(rootOk, QStringLiteral("remote root writable"), rootDetail);
        auto trainerFound = profileTrainer(*c.transport, *p);
        if (!trainerFound) {
            check(false, QStringLiteral("trainer"), trainerFound.error().text());
        } else {
            auto v = c.transport->exec(shellJoin({*trainerFound, QStringLiteral("--version")}), 60000, Idempotent::Yes);
            check(v && v->exitCode == 0, QStringLiteral("trainer"),
                  v ? *trainerFound + QStringLiteral(" → ") + QString::fromUtf8(v->out + v->err).trimmed().left(200) : v.error().text());
        }
        return allOk ? 0 : 1;
    }

    CLI::App* m_app = nullptr;
    CLI::App* m_list = nullptr;
    CLI::App* m_add = nullptr;
    CLI::App* m_test = nullptr;
    bool m_json = false;
    std::string m_file, m_name, m_testName;
    bool m_connectOnly = false;
};
}  // namespace

std::unique_ptr<Command> profilesCommand() { return std::make_unique<ProfilesCommand>(); }

}  // namespace scaledesk::cli
