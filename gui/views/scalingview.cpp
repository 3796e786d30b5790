#include "views/scalingview.h"

#include "analysis/analysisinputs.h"
#include "charts/chartexport.h"
#include "charts/chartstyle.h"
#include "charts/headless.h"
#include "charts/scalingcharts.h"
#include "dialogs/plainmessage.h"
#include "workspace/workspacecontroller.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollArea>
#include <QSet>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <utility>

namespace scaledesk::gui {

ScalingView::ScalingView(WorkspaceController& controller, QWidget* parent) : QWidget(parent), m_controller(controller)
{
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    m_sweep = new QComboBox;
    auto* exportButton = new QPushButton(tr("Export…"));
    // The report's definition of epoch time: training only (NERSC, itwinai), or with validation
    // (`scaledesk report --include-validation`).
    m_includeValidation = new QCheckBox(tr("Validation in epoch time"));
    m_includeValidation->setToolTip(tr("Epoch time is the training time of an epoch, as NERSC and itwinai time it. Checked: "
                                       "training plus validation (scaledesk report --include-validation)."));
    bar->addWidget(new QLabel(tr("Sweep")));
    bar->addWidget(m_sweep, 1);
    bar->addWidget(m_includeValidation);
    m_prediction = new QCheckBox(tr("Prediction"));
    m_prediction->setToolTip(tr("Overlay the performance model's prediction (scaledesk plan), fitted to this sweep's runs and "
                                "its profile's calibrations: a dashed line over its 90 % range per strategy, so the measured points "
                                "show where the model was right (docs/planner.md)."));
    bar->addWidget(m_prediction);
    bar->addWidget(exportButton);
    layout->addLayout(bar);
    // The six charts reflow to the width (2 columns where two fit, else 1) and scroll vertically only.
    m_scroll = new QScrollArea;
    m_scroll->setWidgetResizable(true);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* inner = new QWidget;
    m_grid = new QGridLayout(inner);
    m_scroll->setWidget(inner);
    layout->addWidget(m_scroll, 1);
    // As tall as its lines (one for "No warnings."), at most 110 px; long warnings wrap.
    m_warnings = new QListWidget;
    m_warnings->setWordWrap(true);
    m_warnings->setTextElideMode(Qt::ElideNone);
    layout->addWidget(m_warnings);
    m_scroll->viewport()->installEventFilter(this);
    m_warnings->viewport()->installEventFilter(this);
    connect(m_sweep, &QComboBox::currentTextChanged, this, &ScalingView::showSweep);
    connect(m_includeValidation, &QCheckBox::toggled, this, [this] { showSweep(m_sweep->currentText()); });
    connect(exportButton, &QPushButton::clicked, this, &ScalingView::exportAll);
    connect(&m_controller, &WorkspaceController::reportReady, this, &ScalingView::showReport);
    connect(&m_controller, &WorkspaceController::planReady, this, &ScalingView::showPlan);
    connect(m_prediction, &QCheckBox::toggled, this, [this](bool on) {
        m_hasPlan = false;
        m_planError.clear();
        if (on && !m_sweep->currentText().isEmpty())
            m_controller.loadPlan(m_sweep->currentText());
        else
            redraw();
    });
}

namespace {
// A sweep's runs as the report sees them: which runs, and in what state.
QString runsOf(const QList<RunSummary>& runs, const QString& sweep)
{
    QStringList parts;
    for (const RunSummary& r : runs)
        if (r.sweep == sweep) parts << r.id + QLatin1Char('=') + runStateName(r.state);
    parts.sort();
    return parts.join(QLatin1Char(','));
}
}  // namespace

namespace {
constexpr int kChartMinWidth = 400;      ///< a chart's narrowest: its title and legend still fit
constexpr int kWarningsMaxHeight = 110;  ///< about five lines, then the list scrolls
}  // namespace

void ScalingView::setRuns(const QList<RunSummary>& runs)
{
    m_runs = runs;
    QStringList sweeps;  // in first-seen order; the set keeps 100,000 runs linear
    QSet<QString> seen;
    for (const RunSummary& r : runs)
        if (!r.sweep.isEmpty() && !seen.contains(r.sweep)) {
            seen.insert(r.sweep);
            sweeps << r.sweep;
        }
    const QString before = m_sweep->currentText();
    setSweeps(sweeps);
    const QString sweep = m_sweep->currentText();
    // setSweeps() asked for a report when the shown sweep changed; otherwise ask again when its
    // runs did (a state change: a new epoch's numbers come with it at the end, and polls of a
    // running run bring no state change, so this reads the report a few times a run, not per poll).
    if (sweep == before && !sweep.isEmpty() && m_runsSeenOf == sweep && runsOf(runs, sweep) != m_runsSeen) showSweep(sweep);
}

void ScalingView::followSweep(const QString& sweep)
{
    m_pendingSweep = sweep;
    if (m_sweep->findText(sweep) >= 0) {
        m_pendingSweep.clear();
        showSweep(sweep);
    }
}

QString ScalingView::currentSweep() const { return m_sweep->currentText(); }

void ScalingView::setSweeps(const QStringList& sweeps)
{
    const QString current = m_sweep->currentText();
    m_sweep->blockSignals(true);
    m_sweep->clear();
    m_sweep->addItems(sweeps);
    m_sweep->blockSignals(false);
    if (!m_pendingSweep.isEmpty() && sweeps.contains(m_pendingSweep)) {
        const QString wanted = std::exchange(m_pendingSweep, QString());
        showSweep(wanted);
    } else if (sweeps.contains(current)) {
        const QSignalBlocker quiet(m_sweep);  // the same sweep: setRuns() reads it again when its runs change
        m_sweep->setCurrentText(current);
    } else if (!sweeps.isEmpty()) {
        showSweep(sweeps.first());
    }
}

int ScalingView::chartCount() const { return int(m_views.size()); }

QChart* ScalingView::chartAt(int i) const
{
    auto* view = qobject_cast<QChartView*>(m_views.value(i));
    return view ? view->chart() : nullptr;
}

void ScalingView::showSweep(const QString& sweep)
{
    if (sweep.isEmpty()) return;
    if (m_sweep->currentText() != sweep) {
        const QSignalBlocker quiet(m_sweep);  // this call asks for the report itself, once
        m_sweep->setCurrentText(sweep);
    }
    m_runsSeen = runsOf(m_runs, sweep);
    m_runsSeenOf = sweep;
    // The report reads every run of the sweep: on a pool thread; showReport() draws it.
    ReportOptions options;
    options.includeValidation = m_includeValidation->isChecked();
    m_controller.loadReport(sweep, options);
}

void ScalingView::showReport(const QString& sweep, const ScalingReport& report)
{
    if (sweep != m_sweep->currentText()) return;  // the user has moved on
    m_report = report;
    m_hasPlan = false;
    m_planError.clear();
    redraw();
    if (m_prediction->isChecked()) m_controller.loadPlan(sweep);  // the runs may have changed
}

void ScalingView::showPlan(const QString& sweep, const Plan& plan, const QString& error)
{
    if (sweep != m_sweep->currentText() || !m_prediction->isChecked()) return;
    m_plan = plan;
    m_hasPlan = error.isEmpty();
    m_planError = error;
    redraw();
}

void ScalingView::redraw()
{
    qDeleteAll(m_views);
    m_views.clear();
    const auto charts = buildScalingCharts(m_report, m_hasPlan ? &m_plan : nullptr);
    for (int i = 0; i < charts.size(); ++i) {
        auto* view = new FittedChartView(charts[i].second);  // the view owns its chart
        view->setRenderHint(QPainter::Antialiasing);
        view->setMinimumSize(kChartMinWidth, 300);
        m_views << view;
    }
    m_columns = 0;  // lay them out anew
    layoutCharts();
    m_warnings->clear();
    if (m_report.warnings.isEmpty() && m_planError.isEmpty() && (!m_hasPlan || m_plan.warnings.isEmpty()))
        m_warnings->addItem(tr("No warnings."));
    for (const QString& w : m_report.warnings) m_warnings->addItem(QStringLiteral("⚠ ") + w);
    if (!m_planError.isEmpty()) m_warnings->addItem(tr("⚠ No prediction: %1").arg(m_planError));
    if (m_hasPlan)
        for (const QString& w : m_plan.warnings) m_warnings->addItem(tr("⚠ Prediction: %1").arg(w));
    fitWarnings();
}

void ScalingView::layoutCharts()
{
    const int spacing = m_grid->horizontalSpacing() < 0 ? 6 : m_grid->horizontalSpacing();
    const QMargins margins = m_grid->contentsMargins();
    const int columns = m_scroll->viewport()->width() >= 2 * kChartMinWidth + spacing + margins.left() + margins.right() ? 2 : 1;
    if (columns == m_columns) return;
    m_columns = columns;
    for (QWidget* v : std::as_const(m_views)) m_grid->removeWidget(v);
    for (int i = 0; i < m_views.size(); ++i) m_grid->addWidget(m_views[i], i / columns, i % columns);
    for (int c = 0; c < 2; ++c) m_grid->setColumnStretch(c, c < columns ? 1 : 0);
}

void ScalingView::fitWarnings()
{
    int height = 2 * m_warnings->frameWidth() + 2;
    for (int i = 0; i < m_warnings->count() && height < kWarningsMaxHeight; ++i) height += m_warnings->sizeHintForRow(i);
    m_warnings->setFixedHeight(std::min(height, kWarningsMaxHeight));
}

// The charts' viewport and the warnings pane, resized (after the layout gave them their width):
// the columns follow the viewport, and the pane's height its rows, which wrap to a new width.
bool ScalingView::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::Resize) {
        if (watched == m_scroll->viewport()) layoutCharts();
        if (watched == m_warnings->viewport()) fitWarnings();
    }
    return QWidget::eventFilter(watched, event);
}

void ScalingView::exportAll()
{
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Export the report to"), exportStartPath());
    if (dir.isEmpty()) return;
    rememberExportPath(dir, true);
    QStringList written;
    // What the view shows: with its prediction when that is on.
    Status ok = renderReportCharts(m_report, dir, {QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf")}, &written, plan());
    for (const auto& [name, text] :
         {std::pair{QStringLiteral("groups.csv"), m_report.groupsCsv()}, std::pair{QStringLiteral("runs.csv"), m_report.runsCsv()},
          std::pair{QStringLiteral("report.md"), m_report.markdown()}}) {
        if (!ok) break;
        QSaveFile f(dir + QLatin1Char('/') + name);
        if (!f.open(QIODevice::WriteOnly) || f.write(text.toUtf8()) < 0 || !f.commit())
            ok = Error{ErrorCode::ExportIo, f.errorString(), f.fileName()};
    }
    if (!ok)
        plainMessage(this, QMessageBox::Warning, tr("Export failed"), ok.error().text());
    else
        QMessageBox::information(this, tr("Export"), tr("Wrote %1 files to %2.").arg(written.size() + 3).arg(dir));
}

}  // namespace scaledesk::gui
