// Cold start of the window: from nothing to a shown, painted main window whose navigator lists
// every run, for a workspace of 10,000 runs against an empty one, each in a fresh process
// (this program runs itself as the child). Offscreen platform.
//
//   ninja -C build bench-coldstart
#include "mainwindow.h"
#include "runlistmodel.h"
#include "workspacecontroller.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace scaledesk;

namespace {
void makeWorkspace(const QString& root, int runs)
{
    auto store = RunStore::open(Workspace(root));
    for (int i = 0; i < runs; ++i) {
        RunRecord r;
        r.id = QStringLiteral("sweep%1-ddp-%2x4-r1").arg(i / 100).arg(i % 100 + 1);
        r.sweep = QStringLiteral("sweep%1").arg(i / 100);
        r.profile = QStringLiteral("local");
        r.nodes = i % 100 + 1;
        r.ranksPerNode = 4;
        r.transition(RunState::Queued, QStringLiteral("job"));
        r.transition(RunState::Completed, QStringLiteral("done"));
        (*store)->save(r);
    }
}

// Child: time from main() to the first paint of a window listing every run.
int child(const QString& root, int expected)
{
    QElapsedTimer t;
    t.start();
    int argc = 1;
    char name[] = "bench_coldstart";
    char* argv[] = {name, nullptr};
    QApplication app(argc, argv);
    gui::WorkspaceController controller(root);
    gui::MainWindow w(controller);
    w.resize(1400, 900);
    w.show();
    while (w.runModel()->rowCount() < expected) QCoreApplication::processEvents();
    w.repaint();
    QCoreApplication::processEvents();
    std::printf("%.1f\n", t.nsecsElapsed() / 1e6);
    return 0;
}
}  // namespace

int main(int argc, char** argv)
{
    if (argc == 4 && QByteArray(argv[1]) == "--child") return child(QString::fromLocal8Bit(argv[2]), QByteArray(argv[3]).toInt());
    QTemporaryDir dir;
    const QString empty = dir.filePath(QStringLiteral("empty")), full = dir.filePath(QStringLiteral("full"));
    {
        int c = 1;
        char n[] = "x";
        char* v[] = {n, nullptr};
        QCoreApplication app(c, v);
        makeWorkspace(empty, 0);
        QElapsedTimer t;
        t.start();
        makeWorkspace(full, 10000);
        std::printf("made a workspace of 10,000 runs in %.1f s\n", t.elapsed() / 1000.0);
    }
    auto measure = [&](const QString& root, int runs) {
        std::vector<double> ms;
        for (int i = 0; i < 5; ++i) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
            p.setProcessEnvironment(env);
            QElapsedTimer wall;
            wall.start();
            p.start(QString::fromLocal8Bit(argv[0]), {QStringLiteral("--child"), root, QString::number(runs)});
            p.waitForFinished(60000);
            ms.push_back(wall.nsecsElapsed() / 1e6);
        }
        std::sort(ms.begin(), ms.end());
        return ms[ms.size() / 2];
    };
    const double e = measure(empty, 0), f = measure(full, 10000);
    std::printf("cold start to a painted window (process start to exit, median of 5): empty workspace %.0f ms, 10,000 runs %.0f ms; ratio %.2fx\n",
                e, f, f / e);
    return 0;
}
