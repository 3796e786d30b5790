#include "views/runview.h"

#include "charts/chartstyle.h"
#include "charts/serieschart.h"
#include "workspace/workspacecontroller.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDesktopServices>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
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
    // However long the status, the header never widens the window: it is elided to its width, the
    // whole line in its tooltip.
    m_header->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_header->setMinimumWidth(80);
    top->addWidget(m_header, 1);
    m_cancel = new QPushButton(tr("Cancel"));
    m_stop = new QPushButton(tr("Checkpoint && stop"));
    m_requeue = new QPushButton(tr("Requeue"));
    m_folder = new QPushButton(tr("Open folder"));
    // Late training is a flat line at the bottom of a linear loss axis: a log one shows it.
    m_logLoss = new QCheckBox(tr("Log loss"));
    m_logLoss->setToolTip(tr("The loss on a logarithmic axis"));
    connect(m_logLoss, &QCheckBox::toggled, this, [this](bool on) { m_charts[0]->setLogY(on); });
    top->addWidget(m_logLoss);
    for (auto* b : {m_cancel, m_stop, m_requeue, m_folder}) top->addWidget(b);
    connect(m_cancel, &QPushButton::clicked, this, [this] { trigger(RunAction::Cancel); });
    connect(m_stop, &QPushButton::clicked, this, [this] { trigger(RunAction::CheckpointStop); });
    connect(m_requeue, &QPushButton::clicked, this, [this] { trigger(RunAction::Requeue); });
    connect(m_folder, &QPushButton::clicked, this, [this] {
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
    m_rank->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    fillRanks(0);
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
    connect(&m_controller, &WorkspaceController::runsChanged, this, [this] {
        showHeader();
        updateActions();
    });
    connect(&m_controller, &WorkspaceController::readerReady, this, [this](const QString& id) {
        if (id == m_runId) showRun(id);
    });
    updateActions();
}

void RunView::updateActions()
{
    for (auto [button, action] :
         {std::pair{m_cancel, RunAction::Cancel}, std::pair{m_stop, RunAction::CheckpointStop}, std::pair{m_requeue, RunAction::Requeue}}) {
        const ActionCheck c = m_controller.check(action, m_runId);
        button->setEnabled(c.allowed);
        button->setToolTip(c.allowed ? QString() : c.reason);
    }
    // A folder to open only with a run picked (its mirror exists from the run's first record).
    m_folder->setEnabled(!m_runId.isEmpty());
    m_folder->setToolTip(m_runId.isEmpty() ? tr("Pick a run in the navigator") : tr("The run's local mirror"));
}

void RunView::trigger(RunAction action)
{
    const ActionCheck c = m_controller.check(action, m_runId);
    if (!c.allowed) return;
    if (!c.confirm.isEmpty() &&
        QMessageBox::question(this, m_cancel->window()->windowTitle(), c.confirm, QMessageBox::Yes | QMessageBox::No, QMessageBox::No) !=
            QMessageBox::Yes)
        return;
    switch (action) {
    case RunAction::Cancel: m_controller.cancel(m_runId); break;
    case RunAction::CheckpointStop: m_controller.checkpointStop(m_runId); break;
    case RunAction::Requeue: m_controller.requeue(m_runId, true); break;
    }
}

namespace {
QString duration(qint64 s)
{
    if (s < 120) return QObject::tr("%1 s").arg(s);
    if (s < 7200) return QObject::tr("%1 min %2 s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
    return QObject::tr("%1 h %2 min").arg(s / 3600).arg(s / 60 % 60, 2, 10, QLatin1Char('0'));
}
}  // namespace

namespace {
// Where the trainer ran and in what precision, as its manifest says: " on cuda:0 (NVIDIA H200), bf16";
// empty before the manifest arrives (or for a run whose manifest does not say).
QString deviceText(const QJsonObject& m)
{
    const QString device = m.value(QStringLiteral("device_name")).toString(m.value(QStringLiteral("device")).toString());
    if (device.isEmpty()) return {};
    const QString gpu = m.value(QStringLiteral("gpu_name")).toString();
    const QString amp = m.value(QStringLiteral("amp_mode")).toString();
    return QObject::tr(" on %1%2, %3")
        .arg(device, gpu.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(gpu),
             amp.isEmpty() || amp == QLatin1String("none") ? QObject::tr("fp32") : amp);
}
}  // namespace

QString RunView::headerText() const { return m_header->toolTip().isEmpty() ? m_header->text() : m_header->toolTip(); }

void RunView::resizeEvent(QResizeEvent* e)
{
    QWidget::resizeEvent(e);
    if (!m_runId.isEmpty() && m_controller.snapshot(m_runId)) showHeader();  // elided to the new width
}

void RunView::showHeader()
{
    const RunSnapshot* snap = m_controller.snapshot(m_runId);
    if (m_runId.isEmpty() || !snap) return;
    const RunRecord& r = snap->record;
    const QJsonObject& m = snap->manifest;
    // An imported run had no job here: its log is the run's out.log (a NERSC or ScaleDesk run's
    // rank 0), and other ranks' logs are listed only where they came with it.
    const bool hasJob = !r.imported();
    // The record arrived after the run was picked: its ranks, and whether it had a job.
    if (m_rank->count() != r.nodes * r.ranksPerNode + (hasJob ? 1 : 0) || (m_rank->findData(-1) >= 0) != hasJob) {
        const int chosen = hasJob ? m_rank->currentData().toInt() : 0;
        fillRanks(r.nodes * r.ranksPerNode, hasJob);
        m_rank->setCurrentIndex(std::max(0, m_rank->findData(chosen)));
        if (!hasJob) readNew();
    }
    // When it ran: the trainer's own start and end (manifest), else the recorded transitions.
    QDateTime start = QDateTime::fromString(m.value(QStringLiteral("start_utc")).toString(), Qt::ISODateWithMs);
    for (const auto& h : r.history)
        if (!start.isValid() && h.state == RunState::Running) start = h.when;
    QString timing;
    if (start.isValid() && r.state == RunState::Running) {
        const qint64 elapsed = start.secsTo(QDateTime::currentDateTimeUtc());
        timing = tr(", running for %1").arg(duration(elapsed));
        // Estimated remaining time: the pace so far over the steps left.
        const double total = m.value(QStringLiteral("tot_steps")).toDouble();
        const Series* steps =
            m_controller.hasReader(m_runId) ? m_controller.reader(m_runId).metrics().series(QStringLiteral("step/loss")) : nullptr;
        if (steps && !steps->empty() && total > 0) {
            const double done = steps->steps().back();
            if (done > 0 && done < total) timing += tr(", about %1 to go").arg(duration(qRound64(elapsed / done * (total - done))));
        }
    } else if (start.isValid() && isFinal(r.state)) {
        QDateTime end = QDateTime::fromString(m.value(QStringLiteral("end_utc")).toString(), Qt::ISODateWithMs);
        if (!end.isValid() && !r.history.isEmpty()) end = r.history.last().when;
        timing = tr(", ran for %1").arg(duration(qMax<qint64>(0, start.secsTo(end))));
    }
    // The trainer's loss is an L1 loss; your own code's is whatever it logged as `loss`.
    m_charts[0]->setYTitle(r.task == QLatin1String("command") ? tr("Loss") : tr("L1 loss"));
    // A run that has ended and left a chart empty never recorded that quantity: say so.
    for (SeriesChart* chart : m_charts) chart->setEmptyText(isFinal(r.state) ? tr("Not recorded by this run") : tr("No data yet"));
    const QString job = r.jobId.isEmpty() ? tr("no job") : tr("job %1").arg(r.jobId);
    const QString rest = tr(" — %1 (%2), %3, %4 node(s) × %5 rank(s), %6%7%8")
                             .arg(runStateName(r.state), r.message, job)
                             .arg(r.nodes)
                             .arg(r.ranksPerNode)
                             .arg(r.strategy, deviceText(m), timing);
    QFont bold = m_header->font();
    bold.setBold(true);
    const int idWidth = QFontMetrics(bold).horizontalAdvance(r.id);
    const QString shown = m_header->fontMetrics().elidedText(rest, Qt::ElideRight, std::max(0, m_header->width() - idWidth - 8));
    m_header->setText(QStringLiteral("<b>%1</b>%2").arg(r.id.toHtmlEscaped(), shown.toHtmlEscaped()));
    m_header->setToolTip(r.id + rest);
}

void RunView::fillRanks(int world, bool hasJob)
{
    // Rank 0 writes out.log (as the NERSC trainer does); every other rank writes rank-<n>.log.
    const QSignalBlocker quiet(m_rank);
    m_rank->clear();
    if (hasJob) m_rank->addItem(tr("Job output"), -1);
    for (int r = 0; r < world; ++r) m_rank->addItem(r == 0 ? tr("Rank 0 (out.log)") : tr("Rank %1").arg(r), r);
}

QString RunView::logPlaceholder() const { return m_log->placeholderText(); }

void RunView::focusLogSearch()
{
    m_search->setFocus(Qt::ShortcutFocusReason);
    m_search->selectAll();
}

void RunView::showRun(const QString& runId)
{
    const bool same = runId == m_runId;
    m_runId = runId;
    if (!same) {
        m_log->clear();
        fillRanks(0);  // showHeader() lists the run's ranks once its record is there
    }
    updateActions();
    if (!m_controller.hasReader(runId)) {
        // The first read of a run parses its whole metrics file: off the GUI thread.
        m_header->setText(tr("<b>%1</b> — reading its metrics…").arg(runId.toHtmlEscaped()));
        m_header->setToolTip(QString());
        m_controller.loadRun(runId);
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
    // A run without step records (one imported from TensorBoard or a NERSC log) shows its
    // per-epoch TensorBoard tags instead.
    const bool perStep = m.series(QStringLiteral("step/loss")) != nullptr;
    m_charts[0]->setCurves(
        {perStep ? curve(QStringLiteral("step/loss"), tr("train (step)"), c) : curve(QStringLiteral("Loss/train"), tr("train (epoch)"), c),
         curve(QStringLiteral("Loss/valid"), tr("validation"), referenceColor())});
    m_charts[1]->setCurves({perStep ? curve(QStringLiteral("step/lr"), tr("learning rate"), c)
                                    : curve(QStringLiteral("Learning Rate"), tr("learning rate (epoch)"), c)});
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
    showHeader();
    updateActions();
    const RunSnapshot* snap = m_controller.snapshot(m_runId);
    const int rank = m_rank->currentData().toInt();
    QStringList logs;
    if (rank == 0)
        logs << QStringLiteral("out.log");
    else if (rank > 0)
        logs << QStringLiteral("rank-%1.log").arg(rank);
    else {
        if (snap && !snap->record.jobId.isEmpty()) logs << QStringLiteral("slurm-%1.out").arg(snap->record.jobId);
        logs << QStringLiteral("job.out");
    }
    // Shown while the pane is empty: a rank that has not written yet says so.
    m_log->setPlaceholderText(rank >= 0 ? tr("Rank %1 has written no log yet (%2 is not in the run's mirror).").arg(rank).arg(logs.first())
                                        : tr("The job has written no output yet."));
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
