#pragma once
// Drives the real `scaledesk` binary for the command-line integration tests.

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTest>
#include <QThread>

namespace scaledesk::test {

struct CliResult {
    int exitCode = -1;
    bool crashed = false;
    QString out;
    QString err;
    QString all() const { return out + err; }
};

class Cli {
public:
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    QString workspace;

    CliResult run(const QStringList& args, int timeoutS = 900) const
    {
        QProcess p;
        p.setProcessEnvironment(env);
        p.setStandardInputFile(QProcess::nullDevice());
        p.start(QStringLiteral(SCALEDESK_CLI), QStringList{QStringLiteral("--workspace"), workspace} + args);
        CliResult r;
        if (!p.waitForFinished(timeoutS * 1000)) {
            p.kill();
            p.waitForFinished();
        }
        r.crashed = p.exitStatus() != QProcess::NormalExit;
        r.exitCode = p.exitCode();
        r.out = QString::fromUtf8(p.readAllStandardOutput());
        r.err = QString::fromUtf8(p.readAllStandardError());
        return r;
    }

    QJsonObject record(const QString& runId) const
    {
        QFile f(workspace + QStringLiteral("/runs/") + runId + QStringLiteral("/run.json"));
        if (!f.open(QIODevice::ReadOnly)) return {};
        return QJsonDocument::fromJson(f.readAll()).object();
    }
    QString state(const QString& runId) const { return record(runId).value(QStringLiteral("state")).toString(); }
    /// The states a run went through, in order (repeats of the same state folded).
    QStringList history(const QString& runId) const
    {
        QStringList states;
        for (const auto& h : record(runId).value(QStringLiteral("history")).toArray()) {
            const QString s = h.toObject().value(QStringLiteral("state")).toString();
            if (states.isEmpty() || states.last() != s) states << s;
        }
        return states;
    }
    QJsonObject manifest(const QString& runId) const
    {
        QFile f(workspace + QStringLiteral("/runs/") + runId + QStringLiteral("/manifest.json"));
        if (!f.open(QIODevice::ReadOnly)) return {};
        return QJsonDocument::fromJson(f.readAll()).object();
    }
    QByteArray mirrored(const QString& runId, const QString& file) const
    {
        QFile f(workspace + QStringLiteral("/runs/") + runId + QLatin1Char('/') + file);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }

    /// For a failed wait: the run's state and message, and the end of its mirrored out.log.
    QString describe(const QString& runId) const
    {
        const QJsonObject r = record(runId);
        const QByteArray log = mirrored(runId, QStringLiteral("out.log"));
        return QStringLiteral("%1: state %2, message '%3'; out.log ends:\n%4")
            .arg(runId, r.value(QStringLiteral("state")).toString(), r.value(QStringLiteral("message")).toString(),
                 QString::fromUtf8(log.right(1500)));
    }

    /// Polls with `status` until `pred` holds for the run's record, or the time is up.
    bool waitFor(const QString& runId, const std::function<bool(const QJsonObject&)>& pred, int seconds) const
    {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < seconds * 1000) {
            run({QStringLiteral("status"), runId}, 120);
            if (pred(record(runId))) return true;
            QThread::msleep(500);
        }
        qWarning("waited %d s in vain: %s", seconds, qPrintable(describe(runId)));
        return false;
    }
    /// Waits until the run's mirrored metrics.jsonl holds at least `steps` step records.
    bool waitForSteps(const QString& runId, int steps, int seconds) const
    {
        return waitFor(
            runId, [&](const QJsonObject&) { return mirrored(runId, QStringLiteral("metrics.jsonl")).count("\"kind\":\"step\"") >= steps; },
            seconds);
    }
};

}  // namespace scaledesk::test
