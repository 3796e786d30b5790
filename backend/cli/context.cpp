#include "cli/context.h"

#include "cli/commands.h"

#include "analysis/epochscsv.h"
#include "analysis/scalingreport.h"
#include "cli/terminal.h"
#include "remote/secretstore.h"
#include "runs/runpoller.h"

#include <CLI/CLI.hpp>

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QSaveFile>
#include <QThread>

#include <unistd.h>

namespace scaledesk::cli {

void addHostKeyFlag(CLI::App& command, SharedOptions& shared)
{
    command.add_flag("--accept-new-host-key", shared.acceptNewHostKey,
                     "trust a host key seen for the first time (a changed key is always refused)");
}

void Connection::rememberSecrets()
{
    for (auto it = entered->begin(); it != entered->end(); ++it)
        if (auto ok = SecretStore().write(it.key(), it.value()); !ok) err(QStringLiteral("scaledesk: ") + ok.error().text());
    entered->clear();
}

Connection Context::connect(const ClusterProfile& p) const
{
    Connection c;
    // The questions an SSH login may ask (a local profile never asks them).
    SshCallbacks cb;
    const bool accept = acceptNewHostKey;
    cb.acceptNewHostKey = [accept](const QString& host, const QString& type, const QString& fp) {
        err(QStringLiteral("The host %1 is not known. Its %2 key fingerprint is %3.").arg(host, type, fp));
        if (accept) {
            err(QStringLiteral("Accepted (--accept-new-host-key) and recorded in known_hosts."));
            return true;
        }
        if (!::isatty(STDIN_FILENO)) return false;
        auto answer = ask(QStringLiteral("Trust it and connect? [y/N] "), true);
        return answer && (answer->trimmed().toLower() == QLatin1String("y") || answer->trimmed().toLower() == QLatin1String("yes"));
    };
    const bool remember = p.rememberSecrets;
    auto entered = c.entered;
    auto triedKeyring = std::make_shared<bool>(false);
    cb.passphrase = [remember, entered, triedKeyring](const QString& keyFile) -> std::optional<QString> {
        const QString key = QStringLiteral("passphrase:") + QFileInfo(keyFile).absoluteFilePath();
        if (remember && !*triedKeyring) {
            *triedKeyring = true;  // once: if the stored one fails, ask
            auto stored = SecretStore().read(key);
            if (!stored)
                err(QStringLiteral("scaledesk: ") + stored.error().text());
            else if (stored->has_value())
                return **stored;
        }
        auto answer = ask(QStringLiteral("Passphrase for %1: ").arg(keyFile), false);
        if (answer && remember) entered->insert(key, *answer);
        return answer;
    };
    cb.keyboardInteractive = [](const QString& name, const QString& instruction,
                                const QList<SshCallbacks::Prompt>& prompts) -> std::optional<QStringList> {
        if (!name.isEmpty()) err(name);
        if (!instruction.isEmpty()) err(instruction);
        QStringList answers;
        for (const auto& pr : prompts) {
            auto a = ask(pr.text, pr.echo);
            if (!a) return std::nullopt;
            answers << *a;
        }
        return answers;
    };
    ProfileConnection pc = connectProfile(p, cb);
    c.transport = std::move(pc.transport);
    c.scheduler = std::move(pc.scheduler);
    return c;
}

Expected<Connection*> Context::connection(const QString& profileName)
{
    auto it = m_connections.find(profileName);
    if (it != m_connections.end()) return &it->second;
    auto profile = findProfile(ws, profileName);
    if (!profile) return profile.error();
    return &m_connections.emplace(profileName, connect(*profile)).first->second;
}

bool Context::pollRuns(const QStringList& ids, bool verbose)
{
    QMap<QString, QStringList> byProfile;
    for (const QString& id : ids.isEmpty() ? store.activeRunIds() : ids) {
        auto r = store.load(id);
        if (r && isActive(r->state)) byProfile[r->profile] << id;
    }
    bool ok = true;
    for (auto it = byProfile.begin(); it != byProfile.end(); ++it) {
        auto c = connection(it.key());
        if (!c) {
            err(QStringLiteral("scaledesk: cannot poll %1 runs: %2").arg(it.value().size()).arg(c.error().text()));
            ok = false;
            continue;
        }
        RunPoller poller(store, *(*c)->transport, *(*c)->scheduler);
        auto report = poller.poll(it.value());
        if (!report) {
            err(QStringLiteral("scaledesk: profile %1: %2").arg(it.key(), report.error().text()));
            ok = false;
            continue;
        }
        (*c)->rememberSecrets();
        for (const QString& p : report->problems) err(QStringLiteral("scaledesk: ") + p);
        if (verbose)
            for (const QString& id : report->changed)
                if (auto r = store.load(id)) out(QStringLiteral("%1: %2  %3").arg(id, runStateName(r->state), r->message));
    }
    return ok;
}

int Context::launchRuns(const LaunchRequest& req, bool wait, int timeoutS, QStringList* submittedIds)
{
    if (auto ok = RunActions::checkLaunch(ws, req); !ok) return fail(ok.error());
    auto c = connection(req.profile.name);
    if (!c) return fail(c.error());
    RunActions actions(store, *(*c)->transport, *(*c)->scheduler);
    auto launched = actions.launch(req, [](const ProgressStep& m) { progress(QString(), m); });
    progressDone();
    if (!launched) return fail(launched.error());
    (*c)->rememberSecrets();
    for (const auto& [id, e] : launched->failed()) err(QStringLiteral("scaledesk: %1: %2").arg(id, e.text()));
    for (const QString& id : launched->notTried()) err(QStringLiteral("scaledesk: %1: not submitted (--on-failure stop)").arg(id));
    for (const QString& id : launched->unknown())
        err(QStringLiteral("scaledesk: %1: the submit's outcome is unknown; its job is being looked for (scaledesk status %1)").arg(id));
    if (!launched->complete()) err(QStringLiteral("scaledesk: ") + launched->summary());
    int failures = int(launched->failed().size() + launched->notTried().size());
    QStringList submitted;
    for (const auto& r : launched->submitted()) submitted << r.id;
    if (submittedIds) *submittedIds = submitted;
    if (wait && !submitted.isEmpty()) {
        if (!waitForRuns(submitted, timeoutS, 2.0)) {
            err(QStringLiteral("scaledesk: --timeout reached with runs still active"));
            return 1;
        }
        for (const QString& id : submitted)
            if (auto r = store.load(id); !r || r->state != RunState::Completed) {
                ++failures;
                err(QStringLiteral("scaledesk: %1: %2")
                        .arg(id, r ? QStringLiteral("%1: %2").arg(runStateName(r->state), r->message) : r.error().text()));
            }
    }
    return failures == 0 ? 0 : 1;
}

bool Context::waitForRuns(const QStringList& ids, int timeoutS, double intervalS)
{
    QElapsedTimer t;
    t.start();
    while (true) {
        pollRuns(ids, true);
        bool active = false;
        for (const QString& id : ids.isEmpty() ? store.activeRunIds() : ids)
            if (auto r = store.load(id); r && isActive(r->state)) active = true;
        if (!active) return true;
        if (timeoutS > 0 && t.elapsed() > qint64(timeoutS) * 1000) return false;
        QThread::msleep(static_cast<unsigned long>(intervalS * 1000));
    }
}

void printRuns(const QList<RunRecord>& runs, bool history)
{
    auto when = [](const QDateTime& t) {
        return t.isValid() ? t.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) : QString();
    };
    out(QStringLiteral("%1  %2  %3  %4  %5")
            .arg(QStringLiteral("RUN"), -36)
            .arg(QStringLiteral("STATE"), -13)
            .arg(QStringLiteral("JOB"), -8)
            .arg(QStringLiteral("PROFILE"), -10)
            .arg(QStringLiteral("MESSAGE")));
    for (const auto& r : runs) {
        out(QStringLiteral("%1  %2  %3  %4  %5")
                .arg(r.id, -36)
                .arg(runStateName(r.state), -13)
                .arg(r.jobId, -8)
                .arg(r.profile, -10)
                .arg(r.message));
        if (history)
            for (const auto& t : r.history)
                out(QStringLiteral("    %1  %2  %3").arg(when(t.when)).arg(runStateName(t.state), -13).arg(t.note));
    }
}

Status writeText(const QString& path, const QString& text)
{
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return Error{ErrorCode::ExportIo, f.errorString(), path};
    f.write(text.toUtf8());
    if (!f.commit()) return Error{ErrorCode::ExportIo, QStringLiteral("cannot write: ") + f.errorString(), path};
    return Done{};
}

Status writeReport(const ScalingReport& rep, const QString& dir, const QStringList& formats, const CliHooks& hooks)
{
    const auto imageFormats = exportImageFormats(formats, QStringLiteral("report"), bool(hooks.renderReport));
    if (!imageFormats) return imageFormats.error();
    const QStringList& images = *imageFormats;
    if (!QDir().mkpath(dir)) return Error{ErrorCode::ExportIo, QStringLiteral("cannot create the folder"), dir};
    QList<std::pair<QString, QString>> texts;
    if (formats.contains(QStringLiteral("csv")))
        texts << std::pair{QStringLiteral("groups.csv"), rep.groupsCsv()} << std::pair{QStringLiteral("runs.csv"), rep.runsCsv()};
    if (formats.contains(QStringLiteral("md"))) texts << std::pair{QStringLiteral("report.md"), rep.markdown()};
    for (const auto& [name, text] : texts) {
        if (auto ok = writeText(dir + QLatin1Char('/') + name, text); !ok) return ok.error();
        out(QDir(dir).absoluteFilePath(name));
    }
    if (!images.isEmpty()) {
        QStringList written;
        if (auto ok = hooks.renderReport(rep, dir, images, &written); !ok) return ok.error();
        for (const QString& w : written) out(w);
    }
    return Done{};
}

}  // namespace scaledesk::cli
