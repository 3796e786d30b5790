// Time to first update: from Launch to the first point in the run view's loss chart, and from the
// trainer's first step record (its own "t") to the first point drawn from a step record, on the
// local profile with the real trainer (cpu-tiny). The window's poll schedule against a peer in the same run: the same window
// polling every 5 s (a fixed-interval poller, as a naive live view would).
//
//   ninja -C build bench-live
#include "charts/serieschart.h"
#include "config/profiles.h"
#include "views/runview.h"
#include "workspace/workspacecontroller.h"

#include <QApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace scaledesk;
using namespace scaledesk::gui;

namespace {
struct Sample {
    double launchToPoint = -1;  // s
    double stepToPoint = -1;    // s
};

// The unix time of the trainer's first step record, or -1.
double firstStepTime(const QString& metrics)
{
    QFile f(metrics);
    if (!f.open(QIODevice::ReadOnly)) return -1;
    while (!f.atEnd()) {
        const QJsonObject o = QJsonDocument::fromJson(f.readLine()).object();
        if (o.value(QStringLiteral("kind")).toString() == QLatin1String("step")) return o.value(QStringLiteral("t")).toDouble();
    }
    return -1;
}

Sample once(const QString& root, const QString& id, const PollScheduler::Settings* fixed)
{
    WorkspaceController controller(root);
    if (fixed) controller.setPollSettings(*fixed);
    RunView view(controller);
    view.resize(1200, 800);
    view.show();
    LaunchRequest r;
    r.profile = builtinLocalProfile(Workspace(root));
    RunPoint p;
    p.runId = id;
    p.strategy = QStringLiteral("ddp");
    r.points = {p};
    r.options.configFile = QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml");
    r.options.configName = QStringLiteral("cpu-tiny");
    r.makeData = true;
    QElapsedTimer t;
    t.start();
    controller.launch(r);
    view.showRun(id);
    Sample s;
    // The first point may be the initial validation loss, written before any step: the step's
    // delay is measured to the first point shown after the trainer's first step record.
    int beforeSteps = 0;  // points shown before the mirror had a step record
    while (t.elapsed() < 300000) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
        const int shown = view.charts().first()->pointsShown();
        if (shown > 0 && s.launchToPoint < 0) s.launchToPoint = t.elapsed() / 1000.0;
        const Series* loss = controller.hasReader(id) ? controller.reader(id).metrics().series(QStringLiteral("step/loss")) : nullptr;
        if (!loss || loss->empty()) {
            beforeSteps = shown;
            continue;
        }
        if (shown > beforeSteps) {
            const double now = QDateTime::currentMSecsSinceEpoch() / 1000.0;
            s.stepToPoint = now - firstStepTime(root + QStringLiteral("/local/runs/") + id + QStringLiteral("/metrics.jsonl"));
            break;
        }
    }
    // Let the run end before the next one starts (two cores).
    auto ended = [&] {
        for (const RunSummary& rs : controller.runs())
            if (rs.id == id) return !isActive(rs.state);
        return false;
    };
    while (t.elapsed() < 300000 && !ended()) QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    return s;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? -1 : v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    qputenv("SCALEDESK_TRAIN", SCALEDESK_TRAIN_BIN);
    QTemporaryDir dir;
    const QString root = dir.filePath(QStringLiteral("ws"));
    once(root, QStringLiteral("warm-up"), nullptr);  // the data is generated once, here
    PollScheduler::Settings fixed;
    fixed.fastMs = fixed.growingMs = fixed.runningMaxMs = fixed.queuedMaxMs = 5000;
    fixed.quietAfterMs = 0;
    std::vector<double> ours, oursStep, peer, peerStep;
    for (int i = 0; i < 3; ++i) {
        const Sample a = once(root, QStringLiteral("ours-%1").arg(i), nullptr);
        const Sample b = once(root, QStringLiteral("peer-%1").arg(i), &fixed);
        ours.push_back(a.launchToPoint);
        oursStep.push_back(a.stepToPoint);
        peer.push_back(b.launchToPoint);
        peerStep.push_back(b.stepToPoint);
    }
    std::printf("time to the first chart point (cpu-tiny, local profile, median of 3):\n");
    std::printf("  window's schedule:      launch -> point %.2f s; trainer's first step -> point %.2f s (target <= 3 s)\n", median(ours),
                median(oursStep));
    std::printf("  fixed 5 s polling peer: launch -> point %.2f s; trainer's first step -> point %.2f s\n", median(peer), median(peerStep));
    std::printf("  ratio peer/ours (first step -> point): %.1fx\n", median(peerStep) / std::max(0.001, median(oursStep)));
    return 0;
}
