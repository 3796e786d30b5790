#include "views/compareview.h"

#include "analysis/analysisinputs.h"
#include "analysis/axisticks.h"
#include "analysis/epochscsv.h"
#include "charts/chartstyle.h"
#include "charts/serieschart.h"
#include "workspace/workspacecontroller.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMimeData>
#include <QSlider>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent>

namespace scaledesk::gui {

CompareView::CompareView(WorkspaceController& controller, QWidget* parent) : QWidget(parent), m_controller(controller)
{
    setAcceptDrops(true);
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    m_logY = new QCheckBox(tr("Log y"));
    m_x = new QComboBox;
    m_x->addItem(tr("Step"), int(XAxis::Step));
    m_x->addItem(tr("Relative time"), int(XAxis::RelativeTime));
    m_x->addItem(tr("Wall time"), int(XAxis::WallTime));
    m_smoothing = new QSlider(Qt::Horizontal);
    m_smoothing->setRange(0, 99);
    m_smoothing->setToolTip(tr("Smoothing (TensorBoard's weight ×100)"));
    bar->addWidget(new QLabel(tr("x")));
    bar->addWidget(m_x);
    m_smoothingValue = new QLabel;
    m_smoothingValue->setMinimumWidth(m_smoothingValue->fontMetrics().horizontalAdvance(QStringLiteral("0.00 ")));
    bar->addWidget(new QLabel(tr("Smoothing")));
    bar->addWidget(m_smoothing, 1);
    bar->addWidget(m_smoothingValue);
    bar->addWidget(m_logY);
    layout->addLayout(bar);
    auto* split = new QSplitter(Qt::Vertical);
    auto* top = new QSplitter(Qt::Horizontal);
    auto* lists = new QSplitter(Qt::Vertical);
    m_list = new QListWidget;
    m_list->setToolTip(tr("Drag runs here from the navigator"));
    m_tags = new QListWidget;
    m_tags->setToolTip(tr("One chart per checked tag"));
    for (const QString& t : {QStringLiteral("Loss/valid"), QStringLiteral("Loss/train"), QStringLiteral("step/loss"),
                             QStringLiteral("Learning Rate"), QStringLiteral("Avg iters per sec"), QStringLiteral("epoch/samples_per_s"),
                             QStringLiteral("step/step_s"), QStringLiteral("step/comm_exposed_s"), QStringLiteral("step/data_s")}) {
        auto* item = new QListWidgetItem(t, m_tags);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(t == QLatin1String("Loss/valid") ? Qt::Checked : Qt::Unchecked);
    }
    lists->addWidget(m_list);
    lists->addWidget(m_tags);
    lists->setMaximumWidth(260);
    top->addWidget(lists);
    m_chartBox = new QWidget;
    new QVBoxLayout(m_chartBox);
    m_chartBox->layout()->setContentsMargins(0, 0, 0, 0);
    m_hint = new QLabel;
    m_hint->setWordWrap(true);
    m_hint->setStyleSheet(QStringLiteral("QLabel { padding: 6px; }"));
    m_chartBox->layout()->addWidget(m_hint);
    top->addWidget(m_chartBox);
    top->setStretchFactor(1, 1);
    split->addWidget(top);
    m_table = new QTableWidget;
    split->addWidget(m_table);
    split->setStretchFactor(0, 3);
    layout->addWidget(split, 1);
    connect(m_tags, &QListWidget::itemChanged, this, &CompareView::redraw);
    connect(m_x, &QComboBox::currentIndexChanged, this, &CompareView::redraw);
    connect(m_smoothing, &QSlider::valueChanged, this, [this](int v) {
        m_smoothingValue->setText(smoothingText());
        for (SeriesChart* c : m_charts) c->setSmoothing(v / 100.0);
    });
    m_smoothingValue->setText(smoothingText());
    connect(m_logY, &QCheckBox::toggled, this, [this](bool on) {
        for (SeriesChart* c : m_charts) c->setLogY(on);
    });
    redraw();
}

void CompareView::setRuns(const QStringList& runIds)
{
    m_ids = runIds;
    m_ids.removeDuplicates();
    reload();
}

void CompareView::reload()
{
    updateHint();
    m_list->clear();
    for (qsizetype i = 0; i < m_ids.size(); ++i) {
        auto* item = new QListWidgetItem(m_ids[i], m_list);
        item->setForeground(compareColor(int(i)));  // the colour of its curves
    }
    // Parsing every run's metrics is work for a pool thread; the newest request wins.
    const int generation = ++m_generation;
    const QString root = m_controller.workspace().root();
    const QStringList ids = m_ids;
    auto* watcher = new QFutureWatcher<std::shared_ptr<std::vector<CompareRun>>>(this);
    connect(watcher, &QFutureWatcher<std::shared_ptr<std::vector<CompareRun>>>::finished, this, [this, watcher, generation] {
        auto runs = watcher->result();
        watcher->deleteLater();
        if (generation == m_generation && runs) loaded(std::move(*runs));
    });
    watcher->setFuture(QtConcurrent::run([root, ids] {
        auto store = RunStore::open(Workspace(root));  // a store of the pool thread's own
        QStringList warnings;
        auto runs = std::make_shared<std::vector<CompareRun>>();
        if (store) {
            auto loaded = loadCompareRuns(**store, ids, &warnings);
            if (loaded) *runs = std::move(loaded).value();
        }
        return runs;
    }));
}

void CompareView::loaded(std::vector<CompareRun> runs)
{
    m_runs = std::move(runs);
    // Every tag the runs have can be charted (an imported TensorBoard run's own tags, the GPU
    // telemetry): listed after the usual ones, unchecked.
    QStringList all;
    for (const CompareRun& r : m_runs) all << r.metrics.tags();
    all.removeDuplicates();
    all.sort();
    m_tags->blockSignals(true);
    for (const QString& t : all)
        if (m_tags->findItems(t, Qt::MatchExactly).isEmpty()) {
            auto* item = new QListWidgetItem(t, m_tags);
            item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
            item->setCheckState(Qt::Unchecked);
        }
    m_tags->blockSignals(false);
    redraw();
    const Comparison c = compareRuns(m_runs);
    QStringList headers{tr("Run")};
    for (const QString& t : c.tags) headers << t + tr(" final") << t + tr(" best") << t + tr(" best step");
    headers << c.differingKeys;
    m_table->clear();
    m_table->setColumnCount(int(headers.size()));
    m_table->setHorizontalHeaderLabels(headers);
    m_table->setRowCount(int(c.runIds.size()));
    for (int i = 0; i < c.runIds.size(); ++i) {
        int col = 0;
        m_table->setItem(i, col++, new QTableWidgetItem(c.runIds[i]));
        for (const QString& t : c.tags) {
            const TagSummary s = c.summaries[i].value(t);
            // Four significant digits to read; the full value in the tooltip (and in the CSV).
            auto number = [](double v, int digits = 4) {
                auto* item = new QTableWidgetItem(formatNumber(v, digits));
                item->setToolTip(csvNumber(v));
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
                return item;
            };
            m_table->setItem(i, col++, number(s.finalValue));
            m_table->setItem(i, col++, number(s.bestValue));
            m_table->setItem(i, col++, number(s.bestStep, 10));
        }
        for (const QString& k : c.differingKeys) m_table->setItem(i, col++, new QTableWidgetItem(c.configs[i].value(k)));
    }
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
}

void CompareView::setTags(const QStringList& tags)
{
    m_tags->blockSignals(true);
    for (const QString& t : tags)
        if (m_tags->findItems(t, Qt::MatchExactly).isEmpty()) {
            auto* item = new QListWidgetItem(t, m_tags);
            item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        }
    for (int i = 0; i < m_tags->count(); ++i)
        m_tags->item(i)->setCheckState(tags.contains(m_tags->item(i)->text()) ? Qt::Checked : Qt::Unchecked);
    m_tags->blockSignals(false);
    redraw();
}

QStringList CompareView::tagChoices() const
{
    QStringList out;
    for (int i = 0; i < m_tags->count(); ++i) out << m_tags->item(i)->text();
    return out;
}

QString CompareView::smoothingText() const { return QString::number(m_smoothing->value() / 100.0, 'f', 2); }

QString CompareView::hint() const { return m_hint->isHidden() ? QString() : m_hint->text(); }

void CompareView::updateHint()
{
    m_hint->setText(m_ids.isEmpty()         ? tr("Select several runs in the navigator (Ctrl+click), or drag runs here, to see their "
                                                         "curves side by side.")
                        : m_ids.size() == 1 ? tr("One run so far: drag more runs here from the navigator, or select several there, to "
                                                 "compare them with %1.")
                                                  .arg(m_ids.first())
                                            : QString());
    m_hint->setHidden(m_hint->text().isEmpty());
}

void CompareView::redraw()
{
    updateHint();
    QStringList tags;
    for (int i = 0; i < m_tags->count(); ++i)
        if (m_tags->item(i)->checkState() == Qt::Checked) tags << m_tags->item(i)->text();
    while (m_charts.size() > tags.size()) delete m_charts.takeLast();
    while (m_charts.size() < tags.size()) {
        auto* c = new SeriesChart(QString());
        c->setMinimumHeight(220);
        static_cast<QVBoxLayout*>(m_chartBox->layout())->addWidget(c, 1);  // every chart the same height
        m_charts << c;
    }
    // Each run's curves labelled by what tells it apart from the others, coloured by its place in the list.
    QStringList ids;
    for (const CompareRun& r : m_runs) ids << r.record.id;
    const QStringList labels = distinguishingLabels(ids);
    for (int i = 0; i < tags.size(); ++i) {
        QList<SeriesChart::Curve> curves;
        for (qsizetype k = 0; k < qsizetype(m_runs.size()); ++k) {
            const CompareRun& r = m_runs[k];
            curves << SeriesChart::Curve{labels[k], compareColor(int(std::max<qsizetype>(0, m_ids.indexOf(r.record.id)))),
                                         r.metrics.series(tags[i]), r.metrics.startTime(), r.record.id};
        }
        SeriesChart* c = m_charts[i];
        c->chart()->setTitle(tags[i]);
        c->setYTitle(tags[i]);
        c->setCurves(curves);
        c->setXAxis(XAxis(m_x->currentData().toInt()));
        c->setSmoothing(m_smoothing->value() / 100.0);
        c->setLogY(m_logY->isChecked());
    }
}

void CompareView::dragEnterEvent(QDragEnterEvent* e)
{
    if (e->mimeData()->hasFormat(QStringLiteral("application/x-scaledesk-runs"))) e->acceptProposedAction();
}

void CompareView::dropEvent(QDropEvent* e)
{
    const QStringList ids =
        QString::fromUtf8(e->mimeData()->data(QStringLiteral("application/x-scaledesk-runs"))).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    setRuns(m_ids + ids);
    e->acceptProposedAction();
}

}  // namespace scaledesk::gui
