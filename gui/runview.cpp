#include "runview.h"

#include "chartstyle.h"
#include "serieschart.h"
#include "workspacecontroller.h"

#include <QCheckBox>
#include <QJsonObject>
#include <QComboBox>
#include <QDesktopServices>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QUrl>
#include <QVBoxLayout>

namespace scaledesk::gui {

RunView::RunView(WorkspaceController& controller, QWidget* parent) : QWidget(parent), m_controller(controller)
{
    auto* layout = new QVBoxLayout(this);
    auto* top = new QHBoxLayout;
    m_header = new QLabel(tr("Pick a run in the navigator."));
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    top->addWidget(m_header, 1);
    auto* cancel = new QPushButton(tr("Cancel"));
    auto* stop = new QPushButton(tr("Checkpoint && stop"));
    auto* requeue = new QPushButton(tr("Requeue"));
    auto* folder = new QPushButton(tr("Open folder"));
    for (auto* b : {cancel, stop, requeue, folder}) top->addWidget(b);
    connect(cancel, &QPushButton::clicked, this, [this] { if (!m_runId.isEmpty()) m_controller.cancel(m_runId); });
    connect(stop, &QPushButton::clicked, this, [this] { if (!m_runId.isEmpty()) m_controller.cancel(m_runId, QStringLiteral("USR1")); });
    connect(requeue, &QPushButton::clicked, this, [this] { if (!m_runId.isEmpty()) m_controller.requeue(m_runId); });
    connect(folder, &QPushButton::clicked, this, [this] {
        if (!m_runId.isEmpty()) QDesktopServices::openUrl(QUrl::fromLocalFile(m_controller.workspace().runDir(m_runId)));
    });
    layout->addLayout(top);

    auto* split = new QSplitter(Qt::Vertical);
    auto* grid = new QWidget;
    auto* g = new QGridLayout(grid);
    g->setContentsMargins(0, 0, 0, 0);
    const QStringList titles{tr("Loss"), tr("Learning rate"), tr("Throughput"), tr("Step time breakdown")};
    for (int i = 0; i < titles.size(); ++i) {
        auto* c = new SeriesChart(titles[i]);
        c->setMinimumSize(300, 220);
        m_charts << c;
        g->addWidget(c, i / 2, i % 2);
    }
    m_charts[0]->setYTitle(tr("L1 loss"));
    m_charts[1]->setYTitle(tr("Learning rate"));
    m_charts[2]->setYTitle(tr("Samples per second"));
    m_charts[3]->setYTitle(tr("Seconds per step"));
    split->addWidget(grid);

    auto* logBox = new QWidget;
    auto* lv = new QVBoxLayout(logBox);
    lv->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    m_follow = new QCheckBox(tr("Follow"));
    m_follow->setChecked(true);
    m_search = new QLineEdit;
    m_search->setPlaceholderText(tr("Search the log"));
    m_rank = new QComboBox;
    m_rank->addItem(tr("Job output"), 0);
    for (int r = 1; r < 8; ++r) m_rank->addItem(tr("Rank %1").arg(r), r);
    bar->addWidget(m_follow);
    bar->addWidget(m_rank);
    bar->addWidget(m_search, 1);
    lv->addLayout(bar);
    m_log = new QPlainTextEdit;
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(20000);
    m_log->setFont(QFont(QStringLiteral("monospace")));
    lv->addWidget(m_log);
    split->addWidget(logBox);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    layout->addWidget(split, 1);

    connect(m_search, &QLineEdit::returnPressed, this, [this] {
        if (!m_log->find(m_search->text())) {
            m_log->moveCursor(QTextCursor::Start);
            m_log->find(m_search->text());
        }
    });
    connect(m_rank, &QComboBox::currentIndexChanged, this, [this] {
        m_log->clear();
        if (!m_runId.isEmpty()) showRun(m_runId);
    });
    connect(&m_controller, &WorkspaceController::runsUpdated, this, &RunView::update);
    connect(&m_controller, &WorkspaceController::readerReady, this, [this](const QString& id) {
        if (id == m_runId) showRun(id);
    });
}

void RunView::showRun(const QString& runId)
{
    const bool same = runId == m_runId;
    m_runId = runId;
    if (!same) m_log->clear();
    if (!m_controller.hasReader(runId)) {
        // The first read of a run parses its whole metrics file: off the GUI thread.
        m_header->setText(tr("<b>%1</b> — reading its metrics…").arg(runId.toHtmlEscaped()));
        m_controller.loadReader(runId);
        return;
    }
    MirrorReader& reader = m_controller.reader(runId);
    reader.read({});  // what is already mirrored
    const RunMetrics& m = reader.metrics();
    const double start = m.startTime();
    auto curve = [&](const QString& tag, const QString& label, const QColor& color) {
        return SeriesChart::Curve{label, color, m.series(tag), start};
    };
    const QColor c = runColor(runId);
    m_tagCount = int(m.tags().size());
    m_charts[0]->setCurves({curve(QStringLiteral("step/loss"), tr("train (step)"), c), curve(QStringLiteral("Loss/valid"), tr("validation"), Qt::black)});
    m_charts[1]->setCurves({curve(QStringLiteral("step/lr"), tr("learning rate"), c)});
    m_charts[2]->setCurves({curve(QStringLiteral("epoch/samples_per_s"), tr("samples/s (epoch)"), c)});
    m_charts[3]->setCurves({curve(QStringLiteral("step/compute_s"), tr("compute"), strategyColor(QStringLiteral("ddp"))),
                            curve(QStringLiteral("step/comm_exposed_s"), tr("exposed comm"), strategyColor(QStringLiteral("fused"))),
                            curve(QStringLiteral("step/data_s"), tr("data wait"), QColor(0xCC, 0x79, 0xA7))});
    readNew();
}

void RunView::update(const QStringList& runIds)
{
    if (!m_runId.isEmpty() && runIds.contains(m_runId) && m_controller.hasReader(m_runId)) readNew();
}

void RunView::readNew()
{
    auto r = m_controller.store()->load(m_runId);
    if (r) {
        QString elapsed;
        if (!r->history.isEmpty()) {
            qint64 runningSince = -1;
            for (const auto& h : r->history)
                if (h.state == RunState::Running && runningSince < 0) runningSince = h.when.toSecsSinceEpoch();
            if (runningSince > 0) {
                const qint64 end = isActive(r->state) ? QDateTime::currentSecsSinceEpoch() : r->history.last().when.toSecsSinceEpoch();
                elapsed = tr(", running for %1 s").arg(end - runningSince);
            }
        }
        // Estimated remaining time: the pace so far (since the trainer started) over the steps left.
        const QJsonObject m = readRunManifest(m_controller.workspace().runDir(m_runId));
        const Series* steps = m_controller.reader(m_runId).metrics().series(QStringLiteral("step/loss"));
        const double total = m.value(QStringLiteral("tot_steps")).toDouble();
        const QDateTime started = QDateTime::fromString(m.value(QStringLiteral("start_utc")).toString(), Qt::ISODateWithMs);
        if (isActive(r->state) && steps && !steps->empty() && total > 0 && started.isValid()) {
            const double done = steps->steps().back(), elapsedS = started.msecsTo(QDateTime::currentDateTimeUtc()) / 1000.0;
            if (done > 0 && done < total) elapsed += tr(", about %1 s to go").arg(qRound(elapsedS / done * (total - done)));
        }
        m_header->setText(tr("<b>%1</b> — %2 (%3), job %4, %5 node(s) × %6 rank(s), %7%8")
                              .arg(r->id.toHtmlEscaped(), runStateName(r->state), r->message.toHtmlEscaped(), r->jobId)
                              .arg(r->nodes)
                              .arg(r->ranksPerNode)
                              .arg(r->strategy, elapsed));
    }
    const int rank = m_rank->currentData().toInt();
    QStringList logs;
    if (rank > 0) logs << QStringLiteral("rank-%1.log").arg(rank);
    else {
        if (r && !r->jobId.isEmpty()) logs << QStringLiteral("slurm-%1.out").arg(r->jobId);
        logs << QStringLiteral("job.out");
    }
    const auto news = m_controller.reader(m_runId).read(logs);
    if (int(m_controller.reader(m_runId).metrics().tags().size()) != m_tagCount) {
        showRun(m_runId);  // new tags: their curves exist now
        return;
    }
    QStringList lines;
    for (const auto& [file, line] : news.logLines) lines << QString::fromUtf8(line);
    if (!lines.isEmpty()) {
        m_log->appendPlainText(lines.join(QLatin1Char('\n')));
        if (m_follow->isChecked()) m_log->moveCursor(QTextCursor::End);
    }
    for (SeriesChart* c : m_charts) c->dataChanged();
}

}  // namespace scaledesk::gui
