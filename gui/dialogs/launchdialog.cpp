#include "dialogs/launchdialog.h"

#include "analysis/axisticks.h"
#include "analysis/planner.h"
#include "config/clusterprofile.h"
#include "config/commandrun.h"
#include "config/configresolve.h"
#include "config/profiles.h"
#include "runs/runstore.h"
#include "runs/sweep.h"
#include "workspace/pool.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDate>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScreen>
#include <QSettings>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTextDocument>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace scaledesk::gui {

namespace {
// A point's efficiency: 100 % at the base (by definition), else its range, "≤ 100 %" where the
// range was clipped there.
QString efficiencyText(const PlanPoint& p)
{
    if (p.base) return QObject::tr("100 % (the base)");
    QString text = formatWithRange(100 * p.efficiency, 100 * p.efficiencyLow, 100 * p.efficiencyHigh, QStringLiteral(" %"));
    if (p.efficiencyClipped) text += QObject::tr(", clipped at 100 %");
    return text;
}

// Node-hours as a person reads them: 3 significant digits in plain decimals, "< 0.001" below
// (a laptop-sized prediction printed "9.81e-05").
QString nodeHoursText(double h)
{
    if (!std::isfinite(h)) return QStringLiteral("–");
    return h < 0.001 ? QStringLiteral("< 0.001") : formatNumber(h, 3);
}

QList<int> ints(const QString& text, bool* ok)
{
    QList<int> v;
    *ok = !text.trimmed().isEmpty();
    for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool k = false;
        v << part.trimmed().toInt(&k);
        *ok = *ok && k;
    }
    return v;
}

double hours(const QString& limit)
{
    // MM, MM:SS, HH:MM:SS, D-HH[:MM[:SS]]
    QString t = limit;
    double days = 0;
    if (t.contains(QLatin1Char('-'))) {
        days = t.section(QLatin1Char('-'), 0, 0).toDouble();
        t = t.section(QLatin1Char('-'), 1);
        const QStringList p = t.split(QLatin1Char(':'));
        return days * 24 + p.value(0).toDouble() + p.value(1).toDouble() / 60 + p.value(2).toDouble() / 3600;
    }
    const QStringList p = t.split(QLatin1Char(':'));
    if (p.size() == 1) return p[0].toDouble() / 60;
    if (p.size() == 2) return p[0].toDouble() / 60 + p[1].toDouble() / 3600;
    return p[0].toDouble() + p[1].toDouble() / 60 + p[2].toDouble() / 3600;
}
}  // namespace

LaunchDialog::LaunchDialog(const QString& workspaceRoot, const QString& configFile, QWidget* parent)
    : QDialog(parent), m_workspace(workspaceRoot)
{
    setWindowTitle(tr("Launch"));
    auto* form = m_form = new QFormLayout;
    m_profile = new QComboBox;
    for (const auto& e : listProfiles(Workspace(workspaceRoot)))
        m_profile->addItem(e.profile ? e.name : tr("%1 (broken: %2)").arg(e.name, e.error.text()), e.name);
    form->addRow(tr("Profile"), m_profile);
    auto* fileRow = new QHBoxLayout;
    m_configFile = new QLineEdit(configFile);
    auto* browse = new QPushButton(tr("…"));
    fileRow->addWidget(m_configFile, 1);
    fileRow->addWidget(browse);
    form->addRow(tr("Config file"), fileRow);
    m_config = new QComboBox;
    form->addRow(tr("Config"), m_config);
    m_sweep = new QLineEdit;
    form->addRow(tr("Sweep name"), m_sweep);
    m_nodes = new QLineEdit(QStringLiteral("1"));
    m_nodes->setPlaceholderText(tr("e.g. 1,2,4,8"));
    form->addRow(tr("Nodes"), m_nodes);
    m_ranks = new QLineEdit(QStringLiteral("1"));
    form->addRow(tr("Ranks (GPUs) per node"), m_ranks);
    auto* strategies = m_strategies = new QHBoxLayout;
    m_ddp = new QCheckBox(QStringLiteral("ddp"));
    m_ddp->setChecked(true);
    m_fused = new QCheckBox(QStringLiteral("fused"));
    m_zero1 = new QCheckBox(QStringLiteral("zero1"));
    for (auto* c : {m_ddp, m_fused, m_zero1}) strategies->addWidget(c);
    form->addRow(tr("Strategies"), strategies);
    // A run definition's rows (shown instead of the config's and the trainer's strategies).
    m_variants = new QLineEdit;
    m_variants->setPlaceholderText(tr("all of them"));
    form->addRow(tr("Variants"), m_variants);
    m_localBatch = new QSpinBox;
    m_localBatch->setRange(0, 1 << 20);
    m_localBatch->setSpecialValueText(tr("none"));
    m_localBatch->setToolTip(tr("Weak scaling: the per-rank batch, the definition's {local_batch}"));
    form->addRow(tr("Local batch (weak)"), m_localBatch);
    m_reps = new QSpinBox;
    m_reps->setRange(1, 20);
    form->addRow(tr("Repetitions"), m_reps);
    m_scaling = new QComboBox;
    m_scaling->addItem(tr("weak (global batch = ranks × local)"), QStringLiteral("weak"));
    m_scaling->addItem(tr("strong (fixed global batch)"), QStringLiteral("strong"));
    form->addRow(tr("Scaling"), m_scaling);
    m_globalBatch = new QSpinBox;
    m_globalBatch->setRange(1, 1 << 20);
    m_globalBatch->setValue(64);
    form->addRow(tr("Global batch (strong)"), m_globalBatch);
    m_time = new QLineEdit;
    m_time->setPlaceholderText(tr("the profile's"));
    form->addRow(tr("Time limit"), m_time);
    m_makeData = new QCheckBox(tr("Generate the cpu configs' data on the cluster"));
    form->addRow(QString(), m_makeData);
    m_stopOnFailure = new QCheckBox(tr("Stop the sweep at the first point that fails to submit"));
    m_stopOnFailure->setToolTip(
        tr("Otherwise every point is tried, and each one that fails is recorded as submit-failed with its reason."));
    form->addRow(QString(), m_stopOnFailure);
    m_summary = new QLabel;
    m_summary->setWordWrap(true);
    form->addRow(tr("Jobs"), m_summary);
    m_prediction = new QLabel;
    m_prediction->setWordWrap(true);
    m_prediction->setTextFormat(Qt::RichText);
    m_prediction->setToolTip(tr("scaledesk plan's model, fitted to the completed runs of this config on this profile and the "
                                "profile's calibrations (scaledesk calibrate); ranges are nominal 90 % ranges (docs/planner.md)"));
    form->addRow(tr("Predicted"), m_prediction);
    // The job script, folded away by default: the form and its buttons fit a 720 px screen.
    m_scriptToggle = new QToolButton;
    m_scriptToggle->setText(tr("Job script"));
    m_scriptToggle->setCheckable(true);
    m_scriptToggle->setArrowType(Qt::RightArrow);
    m_scriptToggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_scriptToggle->setAutoRaise(true);
    m_scriptToggle->setToolTip(tr("Show the job script each point gets (what submit --dry-run prints)"));
    m_previewPoint = new QComboBox;
    m_preview = new QPlainTextEdit;
    m_preview->setReadOnly(true);
    m_preview->setFont(QFont(QStringLiteral("monospace")));
    m_scriptBox = new QWidget;
    auto* scriptLayout = new QVBoxLayout(m_scriptBox);
    scriptLayout->setContentsMargins(0, 0, 0, 0);
    scriptLayout->addWidget(m_previewPoint);
    scriptLayout->addWidget(m_preview, 1);
    m_scriptBox->setVisible(false);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("Launch"));
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_scriptToggle, 0, Qt::AlignLeft);
    layout->addWidget(m_scriptBox, 1);
    layout->addStretch(0);
    layout->addWidget(m_buttons);
    connect(m_scriptToggle, &QToolButton::toggled, this, [this](bool open) {
        m_scriptToggle->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
        m_scriptBox->setVisible(open);
        // Open: room for the script, within the screen; closed: back to the form's own height.
        const QRect screen = this->screen() ? this->screen()->availableGeometry() : QRect(0, 0, 1280, 720);
        resize(width(), open ? std::min(820, screen.height() - 40) : minimumSizeHint().height());
    });
    resize(760, minimumSizeHint().height());

    connect(m_buttons, &QDialogButtonBox::accepted, this, [this] {
        if (!m_valid) return;  // a collision found at the last moment keeps the dialog open
        saveSettings();
        accept();
    });
    connect(m_sweep, &QLineEdit::textEdited, this, [this] { m_sweepEdited = true; });
    connect(m_makeData, &QCheckBox::clicked, this, [this] { m_makeDataEdited = true; });
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Config file"), m_configFile->text(), tr("YAML (*.yaml *.yml)"));
        if (!f.isEmpty()) m_configFile->setText(f);
    });
    connect(m_configFile, &QLineEdit::textChanged, this, [this] {
        reloadConfigFile();
        applyDefaults();
        revalidate();
    });
    for (auto* e : {m_sweep, m_nodes, m_ranks, m_time, m_variants}) connect(e, &QLineEdit::textChanged, this, &LaunchDialog::revalidate);
    connect(m_localBatch, &QSpinBox::valueChanged, this, &LaunchDialog::revalidate);
    for (auto* c : {m_ddp, m_fused, m_zero1, m_makeData}) connect(c, &QCheckBox::toggled, this, &LaunchDialog::revalidate);
    connect(m_reps, &QSpinBox::valueChanged, this, &LaunchDialog::revalidate);
    connect(m_globalBatch, &QSpinBox::valueChanged, this, &LaunchDialog::revalidate);
    connect(m_scaling, &QComboBox::currentIndexChanged, this, &LaunchDialog::revalidate);
    connect(m_profile, &QComboBox::currentIndexChanged, this, [this] {
        restoreSettings();
        applyDefaults();
        revalidate();
    });
    connect(m_config, &QComboBox::currentTextChanged, this, [this] {
        applyDefaults();
        revalidate();
    });
    connect(m_previewPoint, &QComboBox::currentIndexChanged, this, [this] { m_preview->setPlainText(preview()); });
    reloadConfigFile();
    const int cpu = m_config->findText(QStringLiteral("cpu-tiny"));
    if (cpu >= 0) m_config->setCurrentIndex(cpu);
    restoreSettings();
    applyDefaults();
    revalidate();
}

void LaunchDialog::reloadConfigFile()
{
    const QString file = m_configFile->text();
    m_isCommand = isCommandRunFile(file);
    m_command = CommandRun();
    m_commandError = Error();
    const QString keep = m_config->currentText();
    m_config->blockSignals(true);
    m_config->clear();
    if (m_isCommand) {
        if (auto run = loadCommandRun(file))
            m_command = *run;
        else
            m_commandError = run.error();
    } else if (auto names = configNames(file)) {
        m_config->addItems(*names);
        if (!keep.isEmpty()) m_config->setCurrentText(keep);
    }
    m_config->blockSignals(false);
    // One form, the rows that apply: a named config and the trainer's strategies, or your code's variants.
    m_form->setRowVisible(m_config, !m_isCommand);
    m_form->setRowVisible(m_strategies, !m_isCommand);
    m_form->setRowVisible(m_makeData, !m_isCommand);
    m_form->setRowVisible(m_variants, m_isCommand);
    m_form->setRowVisible(m_localBatch, m_isCommand);
    m_variants->setPlaceholderText(m_isCommand ? tr("all of them: %1").arg(m_command.variantNames().join(QStringLiteral(", ")))
                                               : QString());
}

Status LaunchDialog::fillStrategies(SweepSpec& spec, int sweepBatch)
{
    if (!m_isCommand) {
        for (auto* c : {m_ddp, m_fused, m_zero1})
            if (c->isChecked()) spec.strategies << c->text();
        return fillWeakLocalBatch(spec, m_configFile->text(), m_config->currentText(), sweepBatch);
    }
    if (!m_commandError.message.isEmpty()) return m_commandError;
    spec.variants = m_command.variantNames();
    spec.strategies = m_variants->text().split(QLatin1Char(','), Qt::SkipEmptyParts);
    for (QString& v : spec.strategies) v = v.trimmed();
    if (spec.strategies.isEmpty()) spec.strategies = spec.variants;
    spec.localBatch = m_localBatch->value();
    return checkCommandBatch(m_command, spec);
}

QString LaunchDialog::uniqueSweepName() const
{
    QString name = m_isCommand ? QFileInfo(m_configFile->text()).completeBaseName() : m_config->currentText();
    // A sweep's name is part of folder and job names: a file called "my model.yaml" gives "my-model-…".
    name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("-"));
    name = name.left(40);
    while (name.startsWith(QLatin1Char('-')) || name.startsWith(QLatin1Char('.')) || name.startsWith(QLatin1Char('_'))) name.remove(0, 1);
    const QString base = QStringLiteral("%1-%2").arg(name.isEmpty() ? QStringLiteral("sweep") : name,
                                                     QDate::currentDate().toString(QStringLiteral("yyyyMMdd")));
    const QDir runs(Workspace(m_workspace).runsDir());
    for (int n = 1;; ++n) {
        const QString name = QStringLiteral("%1-%2").arg(base).arg(n);
        if (runs.entryList({name + QStringLiteral("-*")}, QDir::Dirs | QDir::NoDotAndDotDot).isEmpty()) return name;
    }
}

void LaunchDialog::applyDefaults()
{
    if (!m_sweepEdited) {
        const QSignalBlocker quiet(m_sweep);
        m_sweep->setText(uniqueSweepName());
    }
    if (!m_makeDataEdited) {
        const QSignalBlocker quiet(m_makeData);
        auto profile = findProfile(Workspace(m_workspace), m_profile->currentData().toString());
        // A cpu config reads data/ in its run folder, and the window links no other data: generate it.
        m_makeData->setChecked(profile && m_config->currentText().startsWith(QLatin1String("cpu")));
    }
}

void LaunchDialog::restoreSettings()
{
    // The profile's own default first (one rank per GPU on a GPU profile); what was typed for this
    // profile last time wins over it.
    if (auto profile = findProfile(Workspace(m_workspace), m_profile->currentData().toString())) {
        const QSignalBlocker quiet(m_ranks);
        m_ranks->setText(QString::number(defaultRanksPerNode(*profile)));
    }
    QSettings settings;
    settings.beginGroup(QStringLiteral("launch/") + m_profile->currentData().toString());
    if (!settings.contains(QStringLiteral("config"))) return;
    const QSignalBlocker b1(m_config), b2(m_nodes), b3(m_ranks), b4(m_time), b5(m_reps), b6(m_scaling), b7(m_globalBatch);
    const int config = m_config->findText(settings.value(QStringLiteral("config")).toString());
    if (config >= 0) m_config->setCurrentIndex(config);
    m_nodes->setText(settings.value(QStringLiteral("nodes"), m_nodes->text()).toString());
    m_ranks->setText(settings.value(QStringLiteral("ranks"), m_ranks->text()).toString());
    m_time->setText(settings.value(QStringLiteral("time")).toString());
    const QStringList strategies = settings.value(QStringLiteral("strategies")).toStringList();
    for (auto* c : {m_ddp, m_fused, m_zero1}) {
        const QSignalBlocker quiet(c);
        c->setChecked(strategies.contains(c->text()));
    }
    m_reps->setValue(settings.value(QStringLiteral("repetitions"), 1).toInt());
    m_scaling->setCurrentIndex(qMax(0, m_scaling->findData(settings.value(QStringLiteral("scaling"), QStringLiteral("weak")))));
    m_globalBatch->setValue(settings.value(QStringLiteral("global_batch"), 64).toInt());
    const QSignalBlocker b8(m_stopOnFailure);
    m_stopOnFailure->setChecked(settings.value(QStringLiteral("stop_on_failure"), false).toBool());
}

void LaunchDialog::saveSettings() const
{
    QSettings settings;
    settings.beginGroup(QStringLiteral("launch/") + m_profile->currentData().toString());
    settings.setValue(QStringLiteral("config"), m_config->currentText());
    settings.setValue(QStringLiteral("nodes"), m_nodes->text());
    settings.setValue(QStringLiteral("ranks"), m_ranks->text());
    settings.setValue(QStringLiteral("time"), m_time->text());
    QStringList strategies;
    for (auto* c : {m_ddp, m_fused, m_zero1})
        if (c->isChecked()) strategies << c->text();
    settings.setValue(QStringLiteral("strategies"), strategies);
    settings.setValue(QStringLiteral("repetitions"), m_reps->value());
    settings.setValue(QStringLiteral("scaling"), m_scaling->currentData());
    settings.setValue(QStringLiteral("global_batch"), m_globalBatch->value());
    settings.setValue(QStringLiteral("stop_on_failure"), m_stopOnFailure->isChecked());
}

void LaunchDialog::revalidate()
{
    m_valid = false;
    m_points.clear();
    m_sweep->setStyleSheet(QString());
    m_sweep->setToolTip(QString());
    auto fail = [this](const QString& why) {
        m_why = why;
        m_buttons->button(QDialogButtonBox::Ok)->setEnabled(false);
        m_buttons->button(QDialogButtonBox::Ok)->setToolTip(why);
        m_summary->setText(QStringLiteral("<span style='color:#D55E00'>%1</span>").arg(why.toHtmlEscaped()));
        m_previewPoint->clear();
        m_preview->clear();
        ++m_predictions;  // a prediction under way is for a form that is no longer valid
        m_prediction->clear();
    };
    auto profile = findProfile(Workspace(m_workspace), m_profile->currentData().toString());
    if (!profile) return fail(tr("Profile: %1").arg(profile.error().text()));
    m_selected = *profile;
    if (!m_time->text().isEmpty() && !isSlurmTimeLimit(m_time->text()))
        return fail(tr("Time limit: '%1' is not a SLURM time (HH:MM:SS or D-HH:MM:SS)").arg(m_time->text()));
    SweepSpec spec;
    spec.name = m_sweep->text();
    bool okN = false, okR = false;
    spec.nodes = ints(m_nodes->text(), &okN);
    spec.ranksPerNode = ints(m_ranks->text(), &okR);
    if (!okN) return fail(tr("Nodes: comma-separated whole numbers, e.g. 1,2,4"));
    if (!okR) return fail(tr("Ranks per node: comma-separated whole numbers"));
    spec.strategies.clear();
    spec.repetitions = m_reps->value();
    spec.scaling = m_scaling->currentData().toString() == QLatin1String("strong") ? SweepSpec::Scaling::Strong : SweepSpec::Scaling::Weak;
    spec.globalBatch = m_globalBatch->value();
    if (!m_storeTried) {
        m_storeTried = true;
        if (auto store = RunStore::open(Workspace(m_workspace))) m_store = std::move(*store);
    }
    // A sweep launched in parts goes on at its runs' per-rank batch.
    const int sweepBatch = m_store && !m_isCommand ? weakSweepLocalBatch(*m_store, spec.name) : 0;
    if (auto ok = fillStrategies(spec, sweepBatch); !ok) return fail(ok.error().text());
    auto points = expandSweep(spec);
    if (!points) return fail(points.error().text());
    m_points = *points;
    if (auto ok = RunActions::checkLaunch(Workspace(m_workspace), request()); !ok) {
        m_points.clear();
        if (ok.error().code == ErrorCode::RunExists || ok.error().code == ErrorCode::RunId) {
            // The field to change is marked, and the dialog stays open with everything typed.
            m_sweep->setStyleSheet(QStringLiteral("QLineEdit { border: 2px solid #D55E00; }"));
            m_sweep->setToolTip(ok.error().text());
            return fail(tr("Sweep name: %1").arg(ok.error().text()));
        }
        return fail(ok.error().text());
    }
    m_valid = true;
    m_why.clear();
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(true);
    m_buttons->button(QDialogButtonBox::Ok)->setToolTip(QString());
    m_summary->setText(summary());
    const QString keep = m_previewPoint->currentText();
    m_previewPoint->blockSignals(true);
    m_previewPoint->clear();
    for (const RunPoint& p : m_points) m_previewPoint->addItem(p.runId);
    if (!keep.isEmpty()) m_previewPoint->setCurrentText(keep);
    m_previewPoint->blockSignals(false);
    m_preview->setPlainText(preview());
    predict();
}

void LaunchDialog::predict()
{
    const int generation = ++m_predictions;
    m_prediction->setText(tr("<i>Predicting…</i>"));
    const Workspace ws(m_workspace);
    const QString profile = m_selected.name;
    // Your own code: the completed runs launched from this run definition (their step time and
    // gradient size, which the planner says when they lack).
    const QString config = m_isCommand ? QFileInfo(m_command.file).completeBaseName() : m_config->currentText();
    const QString task = m_isCommand ? QStringLiteral("command") : QString();
    const bool local = m_selected.kind == ProfileKind::Local;
    const QList<RunPoint> points = m_points;
    onPool<std::pair<Plan, QString>>(
        this,
        [ws, profile, config, points, task]() -> std::pair<Plan, QString> {
            auto store = RunStore::open(ws);
            if (!store) return {Plan(), store.error().text()};
            auto plan = planForLaunch(**store, profile, config, points, task);
            if (!plan) return {Plan(), plan.error().text()};
            return {*plan, QString()};
        },
        [this, generation, local](const std::pair<Plan, QString>& result) {
            if (generation != m_predictions) return;  // the form changed since
            const auto& [plan, error] = result;
            if (!error.isEmpty()) {
                m_prediction->setText(
                    QStringLiteral("<span style='color:#777'>%1</span>").arg(tr("No prediction: %1").arg(error).toHtmlEscaped()));
            } else {
                // Node-hours are what a cluster charges; the local profile is this machine: no such column.
                QString html = QStringLiteral("<table cellspacing='0' cellpadding='4'><tr><th align='left'>%1</th><th>%2</th><th>%3</th>"
                                              "<th>%4</th>%5</tr>")
                                   .arg(tr("strategy"), tr("nodes × ranks"), tr("epoch"), tr("efficiency"),
                                        local ? QString() : QStringLiteral("<th>%1</th>").arg(tr("node-hours / epoch")));
                QStringList measure;
                for (const PlanPoint& p : plan.points) {
                    const QString shape = QStringLiteral("<tr><td>%1</td><td align='right'>%2 × %3</td>")
                                              .arg(p.strategy.toHtmlEscaped())
                                              .arg(p.nodes)
                                              .arg(p.ranks / std::max(1, p.nodes));
                    if (!p.notMeasured.isEmpty()) {  // no number the model only guessed: what to measure instead
                        QStringList fresh;           // each command once, in the first row that needs it
                        for (const QString& c : p.measureWith)
                            if (!measure.contains(c)) fresh << c;
                        measure << fresh;
                        const QString how = fresh.isEmpty()
                            ? QString()
                            : QStringLiteral("<br>") + tr("measure it: %1").arg(fresh.join(QStringLiteral("; "))).toHtmlEscaped();
                        html += shape +
                            QStringLiteral("<td colspan='%1'><i>%2</i>%3</td></tr>")
                                .arg(local ? 2 : 3)
                                .arg(tr("not measured: %1").arg(p.notMeasured.join(QStringLiteral("; "))).toHtmlEscaped(), how);
                        continue;
                    }
                    html += shape +
                        QStringLiteral("<td align='right'>%1</td><td align='right'>%2%3</td>%4</tr>")
                            .arg(formatWithRange(p.epochS, p.epochLowS, p.epochHighS, QStringLiteral(" s")), efficiencyText(p),
                                 (p.extrapolated ? tr(" (extrapolated)") : QString()) +
                                     (p.rangeNotes.size() <= (p.algorithmSpanned ? 1 : 0)
                                          ? QString()
                                          : tr(" (range widened: a message size lies on a step in the timings; calibrate with "
                                               "this config to time it)")) +
                                     (p.algorithmSpanned ? tr(" (range spans a ring's and a tree's allreduce: timed at one rank "
                                                              "count; calibrate at a second to tell them apart)")
                                                         : QString()),
                                 local ? QString()
                                       : QStringLiteral("<td align='right'>%1</td>").arg(nodeHoursText(p.nodeHours).toHtmlEscaped()));
                    if (!p.outsideModel.isEmpty())  // its own row under the point, across the numbers
                        html += QStringLiteral("<tr><td></td><td colspan='%1'><i>%2</i></td></tr>")
                                    .arg(local ? 3 : 4)
                                    .arg(tr("outside the model: %1").arg(p.outsideModel.join(QStringLiteral("; "))).toHtmlEscaped());
                }
                html += QStringLiteral("</table>");
                if (std::any_of(plan.points.begin(), plan.points.end(), [](const PlanPoint& p) { return p.notMeasured.isEmpty(); }))
                    html += QStringLiteral("<span style='color:#777'>%1</span><br>").arg(plan.rangeSummary().toHtmlEscaped());
                html +=
                    QStringLiteral("<span style='color:#777'>%1</span>")
                        .arg((plan.inputs.value(0) + (plan.warnings.isEmpty() ? QString() : QStringLiteral("; ") + plan.warnings.first()))
                                 .toHtmlEscaped());
                m_prediction->setText(html);
            }
            QTimer::singleShot(0, this, &LaunchDialog::fitHeight);  // once the layout has the new text
            emit predictionUpdated();
        });
}

void LaunchDialog::fitHeight()
{
    // Grow to show the whole prediction (within the screen); never shrink under the user.
    if (!isVisible()) return;
    // QLabel under-reports the height of rich text with a table whose cells wrap: lay the text out
    // at the label's width and ask for that.
    QTextDocument doc;
    doc.setDefaultFont(m_prediction->font());
    doc.setHtml(m_prediction->text());
    doc.setTextWidth(m_prediction->contentsRect().width());
    m_prediction->setMinimumHeight(int(std::ceil(doc.size().height())));
    layout()->activate();
    const QRect screen = this->screen() ? this->screen()->availableGeometry() : QRect(0, 0, 1280, 720);
    const int want = layout()->hasHeightForWidth() ? layout()->totalHeightForWidth(width()) : sizeHint().height();
    if (want > height()) resize(width(), std::min(want, screen.height() - 40));
}

void LaunchDialog::showEvent(QShowEvent* e)
{
    QDialog::showEvent(e);
    QTimer::singleShot(0, this, &LaunchDialog::fitHeight);
}

QString LaunchDialog::prediction() const
{
    QTextDocument doc;
    doc.setHtml(m_prediction->text());
    return doc.toPlainText();
}

QString LaunchDialog::summary() const
{
    if (m_selected.kind == ProfileKind::Local)
        return tr("%1 job(s) on %2 (this machine), as many at once as its slots allow").arg(m_points.size()).arg(m_selected.name);
    const QString limit = m_time->text().isEmpty() ? m_selected.slurm.timeLimit : m_time->text();
    double nodeHours = 0;
    for (const RunPoint& p : m_points) nodeHours += p.nodes * hours(limit);
    return tr("%1 job(s) on %2, at most %3 node-hours requested (time limit %4 each)")
        .arg(m_points.size())
        .arg(m_selected.name)
        .arg(nodeHours, 0, 'f', 1)
        .arg(limit);
}

QString LaunchDialog::preview() const
{
    const int i = m_previewPoint->currentIndex();
    if (!m_valid || i < 0 || i >= m_points.size()) return QString();
    return previewScript(request(), m_points[i]);
}

LaunchRequest LaunchDialog::request() const
{
    LaunchRequest r;
    r.profile = m_selected;
    if (!m_time->text().isEmpty()) r.profile.slurm.timeLimit = m_time->text();
    r.points = m_points;
    if (m_isCommand) {
        r.options.command = m_command;
    } else {
        r.options.configFile = m_configFile->text();
        r.options.configName = m_config->currentText();
        r.makeData = m_makeData->isChecked();
    }
    r.onFailure = m_stopOnFailure->isChecked() ? OnSubmitFailure::Stop : OnSubmitFailure::Continue;
    return r;
}

}  // namespace scaledesk::gui
