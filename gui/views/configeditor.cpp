#include "views/configeditor.h"

#include "config/commandrun.h"
#include "config/configcheck.h"
#include "config/configresolve.h"
#include "config/profiles.h"
#include "workspace/workspacecontroller.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPainter>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSplitter>
#include <QSyntaxHighlighter>
#include <QTabWidget>
#include <QTextBlock>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <yaml-cpp/yaml.h>

namespace scaledesk::gui {

namespace {
class YamlHighlighter : public QSyntaxHighlighter {
public:
    explicit YamlHighlighter(QTextDocument* doc) : QSyntaxHighlighter(doc)
    {
        m_key.setForeground(QColor(0x00, 0x72, 0xB2));
        m_key.setFontWeight(QFont::Bold);
        m_comment.setForeground(QColor(0x77, 0x77, 0x77));
        m_comment.setFontItalic(true);
        m_anchor.setForeground(QColor(0xCC, 0x79, 0xA7));
        m_string.setForeground(QColor(0x00, 0x9E, 0x73));
        m_number.setForeground(QColor(0xD5, 0x5E, 0x00));
    }

protected:
    void highlightBlock(const QString& text) override
    {
        static const QRegularExpression key(QStringLiteral("^\\s*(-\\s+)?([A-Za-z0-9_<.\\-]+)\\s*:"));
        static const QRegularExpression anchor(QStringLiteral("[&*][A-Za-z0-9_\\-]+"));
        static const QRegularExpression str(QStringLiteral("'[^']*'|\"[^\"]*\""));
        static const QRegularExpression num(QStringLiteral("(?<![A-Za-z_])[-+]?\\d+(\\.\\d*)?([eE][-+]?\\d+)?(?![A-Za-z_])"));
        auto apply = [&](const QRegularExpression& re, const QTextCharFormat& f, int group = 0) {
            for (auto it = re.globalMatch(text); it.hasNext();) {
                const auto m = it.next();
                setFormat(int(m.capturedStart(group)), int(m.capturedLength(group)), f);
            }
        };
        apply(num, m_number);
        apply(str, m_string);
        apply(anchor, m_anchor);
        apply(key, m_key, 2);
        const int hash = int(text.indexOf(QLatin1Char('#')));
        if (hash >= 0 && (hash == 0 || text[hash - 1].isSpace())) setFormat(hash, int(text.size()) - hash, m_comment);
    }

private:
    QTextCharFormat m_key, m_comment, m_anchor, m_string, m_number;
};

class Gutter : public QWidget {
public:
    explicit Gutter(YamlEdit* edit) : QWidget(edit), m_edit(edit) {}
    QSize sizeHint() const override { return QSize(m_edit->gutterWidth(), 0); }

protected:
    void paintEvent(QPaintEvent* e) override { m_edit->paintGutter(e); }

private:
    YamlEdit* m_edit;
};
}  // namespace

YamlEdit::YamlEdit(QWidget* parent) : QPlainTextEdit(parent), m_gutter(new Gutter(this))
{
    setFont(QFont(QStringLiteral("monospace")));
    setLineWrapMode(QPlainTextEdit::NoWrap);
    connect(this, &QPlainTextEdit::blockCountChanged, this, [this] { setViewportMargins(gutterWidth(), 0, 0, 0); });
    connect(this, &QPlainTextEdit::updateRequest, this, [this](const QRect& r, int dy) {
        if (dy)
            m_gutter->scroll(0, dy);
        else
            m_gutter->update(0, r.y(), m_gutter->width(), r.height());
    });
    setViewportMargins(gutterWidth(), 0, 0, 0);
}

int YamlEdit::gutterWidth() const
{
    int digits = 1;
    for (int n = std::max(1, blockCount()); n >= 10; n /= 10) ++digits;
    return 12 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * digits;
}

void YamlEdit::resizeEvent(QResizeEvent* e)
{
    QPlainTextEdit::resizeEvent(e);
    const QRect cr = contentsRect();
    m_gutter->setGeometry(QRect(cr.left(), cr.top(), gutterWidth(), cr.height()));
}

void YamlEdit::paintGutter(QPaintEvent* e)
{
    QPainter p(m_gutter);
    p.fillRect(e->rect(), palette().color(QPalette::AlternateBase));
    p.setPen(palette().color(QPalette::PlaceholderText));
    QTextBlock block = firstVisibleBlock();
    int top = int(blockBoundingGeometry(block).translated(contentOffset()).top());
    while (block.isValid() && top <= e->rect().bottom()) {
        const int h = int(blockBoundingRect(block).height());
        if (block.isVisible())
            p.drawText(0, top, m_gutter->width() - 6, h, Qt::AlignRight | Qt::AlignVCenter, QString::number(block.blockNumber() + 1));
        block = block.next();
        top += h;
    }
}

ConfigEditor::ConfigEditor(WorkspaceController& controller, QWidget* parent) : QWidget(parent), m_controller(controller)
{
    auto* layout = new QVBoxLayout(this);
    m_banner = new QLabel;
    m_banner->setWordWrap(true);
    m_banner->hide();
    layout->addWidget(m_banner);
    auto* split = new QSplitter(Qt::Horizontal);
    auto* left = new QSplitter(Qt::Vertical);
    m_edit = new YamlEdit;
    m_highlighter = new YamlHighlighter(m_edit->document());
    m_errors = new QListWidget;
    m_errors->setMaximumHeight(120);
    m_errors->setWordWrap(true);  // a long error wraps at the pane's width instead of being cut
    m_errors->setTextElideMode(Qt::ElideNone);
    left->addWidget(m_edit);
    left->addWidget(m_errors);
    left->setStretchFactor(0, 1);
    split->addWidget(left);
    auto* side = new QTabWidget;
    m_configs = new QTreeWidget;
    m_configs->setHeaderLabels({tr("Config"), tr("Inherits from")});
    m_resolved = new QTreeWidget;
    m_resolved->setHeaderLabels({tr("Key"), tr("Value"), tr("From")});
    m_diff = new QListWidget;
    side->addTab(m_configs, tr("Configs"));
    side->addTab(m_resolved, tr("Resolved"));
    side->addTab(m_diff, tr("Since last run"));
    split->addWidget(side);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);

    m_debounce.setSingleShot(true);
    m_debounce.setInterval(500);
    m_autosave.setSingleShot(true);
    m_autosave.setInterval(1000);
    connect(m_edit, &QPlainTextEdit::textChanged, this, &ConfigEditor::textChanged);
    connect(&m_debounce, &QTimer::timeout, this, &ConfigEditor::validateNow);
    connect(&m_autosave, &QTimer::timeout, this, &ConfigEditor::writeAutosave);
    connect(m_configs, &QTreeWidget::currentItemChanged, this, [this] { showResolved(); });
    connect(&m_controller, &WorkspaceController::latestRunFound, this, &ConfigEditor::showChangesSince);
    connect(&m_trainer, &QProcess::finished, this, [this](int code) {
        m_trainerErrors.clear();
        if (code != 0) {
            // "scaledesk-train: error: <file>:<line>:<col>: <what> [config <name>]", one line per config: an error
            // in a config that others inherit is listed once, with every config it breaks.
            static const QRegularExpression re(QStringLiteral(":(\\d+):(\\d+): (.*?)(?: \\[config ([^\\]]+)\\])?$"));
            QList<std::tuple<int, int, QString>> order;
            QMap<std::tuple<int, int, QString>, QStringList> configs;
            for (const QString& line : QString::fromUtf8(m_trainer.readAllStandardError()).split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
                const auto m = re.match(line);
                std::tuple<int, int, QString> key{0, 0, line.section(QStringLiteral("error: "), 1)};
                static const QRegularExpression configPrefix(QStringLiteral("^config '[^']*', "));
                if (m.hasMatch())
                    key = {m.captured(1).toInt(), m.captured(2).toInt(), m.captured(3).remove(configPrefix)};
                else if (!line.contains(QLatin1String("error")))
                    continue;
                if (!configs.contains(key)) order << key;
                if (m.hasMatch() && !m.captured(4).isEmpty()) configs[key] << m.captured(4);
            }
            for (const auto& [line, col, what] : order) {
                const QStringList in = configs.value({line, col, what});
                m_trainerErrors.append({line, col, in.isEmpty() ? what : what + tr(" (in %1)").arg(in.join(QStringLiteral(", ")))});
            }
        }
        showErrors(m_yamlErrors + m_trainerErrors);
    });
}

ConfigEditor::~ConfigEditor()
{
    if (m_autosave.isActive()) writeAutosave();
    // A check still running is no longer wanted: stop it rather than leave it to QProcess's warning.
    if (m_trainer.state() != QProcess::NotRunning) {
        m_trainer.disconnect(this);
        m_trainer.kill();
        m_trainer.waitForFinished(1000);
    }
}

void ConfigEditor::writeAutosave()
{
    m_autosave.stop();
    const QString a = autosavePath();
    if (a.isEmpty()) return;
    QDir().mkpath(QFileInfo(a).absolutePath());
    QSaveFile f(a);
    if (f.open(QIODevice::WriteOnly)) {
        f.write(m_edit->toPlainText().toUtf8());
        f.commit();
    }
}

QString ConfigEditor::autosavePath() const
{
    if (m_path.isEmpty()) return QString();
    const QByteArray h = QCryptographicHash::hash(QFileInfo(m_path).absoluteFilePath().toUtf8(), QCryptographicHash::Sha1).toHex().left(16);
    return m_controller.workspace().root() + QStringLiteral("/autosave/") + QString::fromLatin1(h) + QStringLiteral(".yaml");
}

bool ConfigEditor::open(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return false;
    m_path = path;
    QByteArray text = f.readAll();
    m_restored.clear();
    QFile autosaved(autosavePath());
    if (autosaved.open(QIODevice::ReadOnly)) {
        const QByteArray kept = autosaved.readAll();
        if (kept != text) {
            text = kept;
            m_restored = autosaved.fileName();
            m_banner->setText(
                tr("Restored text that was not saved (kept in %1). Save to keep it, or reopen the file to drop it.").arg(m_restored));
            m_banner->show();
        }
    }
    m_edit->setPlainText(QString::fromUtf8(text));
    validateNow();
    return true;
}

bool ConfigEditor::save()
{
    QSaveFile f(m_path);
    if (!f.open(QIODevice::WriteOnly)) return false;
    f.write(m_edit->toPlainText().toUtf8());
    if (!f.commit()) return false;
    QFile::remove(autosavePath());
    m_banner->hide();
    return true;
}

void ConfigEditor::textChanged()
{
    m_debounce.start();
    m_autosave.start();
}

void ConfigEditor::validateNow()
{
    m_debounce.stop();
    // The text goes to a file of its own (never the user's file), named like it for the messages.
    if (m_tempFile.isEmpty()) {
        const QString dir = m_controller.workspace().root() + QStringLiteral("/autosave/validate");
        QDir().mkpath(dir);
        m_tempFile = dir + QLatin1Char('/') + QFileInfo(m_path).fileName();
    }
    {
        QSaveFile f(m_tempFile);
        if (f.open(QIODevice::WriteOnly)) {
            f.write(m_edit->toPlainText().toUtf8());
            f.commit();
        }
    }
    m_yamlErrors.clear();
    try {
        YAML::LoadFile(m_tempFile.toStdString());
    } catch (const YAML::Exception& e) {
        m_yamlErrors.append({e.mark.line + 1, e.mark.column + 1, QStringLiteral("YAML: ") + QString::fromStdString(e.msg)});
    }
    // A run definition (your own code) is checked by the one loader that submit uses, not the trainer.
    if (m_yamlErrors.isEmpty() && isCommandRunFile(m_tempFile)) {
        m_configs->clear();
        m_resolved->clear();
        if (auto run = loadCommandRun(m_tempFile); !run) m_yamlErrors.append(locatedError(run.error()));
        showErrors(m_yamlErrors);
        return;
    }
    refreshConfigs();
    // The trainer checks every key of every config of the file (types, values, cross-key rules): an
    // edit of a config reaches the ones that inherit from it, whichever is selected.
    const QString trainer = findLocalTrainer();
    if (m_yamlErrors.isEmpty() && !trainer.isEmpty()) {
        if (m_trainer.state() != QProcess::NotRunning) {
            m_trainer.kill();
            m_trainer.waitForFinished(1000);
        }
        m_errors->clear();
        m_errors->addItem(tr("Checking every config…"));  // not "No errors." before the trainer has said so
        m_trainer.start(trainer, trainerConfigCheckArguments(m_tempFile, QStringLiteral("all")));
    } else {
        showErrors(m_yamlErrors);
    }
}

std::tuple<int, int, QString> ConfigEditor::locatedError(const Error& e)
{
    // "FILE:LINE:COL" as the config readers name a place: the line and column, for the gutter marks.
    static const QRegularExpression at(QStringLiteral(":(\\d+):(\\d+)$"));
    const auto m = at.match(e.location);
    if (!m.hasMatch()) return {0, 0, e.message};
    return {m.captured(1).toInt(), m.captured(2).toInt(), e.message};
}

void ConfigEditor::showErrors(const QList<std::tuple<int, int, QString>>& errors)
{
    m_errors->clear();
    QList<QTextEdit::ExtraSelection> marks;
    for (const auto& [line, col, what] : errors) {
        m_errors->addItem(line > 0 ? tr("%1:%2: %3").arg(line).arg(col).arg(what) : what);
        if (line <= 0) continue;
        QTextEdit::ExtraSelection sel;
        sel.format.setUnderlineStyle(QTextCharFormat::WaveUnderline);
        sel.format.setUnderlineColor(Qt::red);
        QTextCursor c(m_edit->document()->findBlockByNumber(line - 1));
        c.movePosition(QTextCursor::Right, QTextCursor::MoveAnchor, std::max(0, col - 1));
        c.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
        sel.cursor = c;
        marks << sel;
    }
    if (errors.isEmpty()) m_errors->addItem(tr("No errors."));
    m_edit->setExtraSelections(marks);
    const QString why = errors.isEmpty() ? QString() : m_errors->item(0)->text();
    emit validityChanged(errors.isEmpty(), why);
}

QStringList ConfigEditor::errors() const
{
    QStringList out;
    for (int i = 0; i < m_errors->count(); ++i)
        if (m_errors->item(i)->text() != tr("No errors.") && m_errors->item(i)->text() != tr("Checking every config…"))
            out << m_errors->item(i)->text();
    return out;
}

void ConfigEditor::refreshConfigs()
{
    const QString keep = m_configs->currentItem() ? m_configs->currentItem()->text(0) : QString();
    auto parents = configParents(m_tempFile);
    if (!parents) return;  // keep the last good list while the YAML is broken
    m_configs->clear();
    QTreeWidgetItem* select = nullptr;
    for (auto it = parents->begin(); it != parents->end(); ++it) {
        auto* item = new QTreeWidgetItem(m_configs, {it.key(), it.value().join(QStringLiteral(", "))});
        if (it.key() == keep || (!select && keep.isEmpty() && it.key() == QLatin1String("cpu-tiny"))) select = item;
    }
    if (!select && m_configs->topLevelItemCount() > 0) select = m_configs->topLevelItem(0);
    m_configs->setCurrentItem(select);
    m_configs->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
}

void ConfigEditor::showResolved()
{
    m_resolved->clear();
    m_diff->clear();
    auto* current = m_configs->currentItem();
    if (!current) return;
    const QString name = current->text(0);
    m_shown.clear();
    auto values = resolvedConfigWithSources(m_tempFile, name);
    if (!values) return;
    for (auto it = values->begin(); it != values->end(); ++it) {
        m_shown.insert(it.key(), it.value().value);
        auto* item =
            new QTreeWidgetItem(m_resolved, {it.key(), it.value().value, tr("%1 (line %2)").arg(it.value().from).arg(it.value().line)});
        if (it.value().from != name) item->setForeground(2, QColor(0x77, 0x77, 0x77));
    }
    m_resolved->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    // The newest run launched from this file with this config (an index query, off the GUI
    // thread): what changed since. The answer fills the list when it comes.
    m_controller.findLatestRun(QFileInfo(m_path).absoluteFilePath(), name);
}

void ConfigEditor::showChangesSince(const QString& configFile, const QString& name, const ConfigBaseline& baseline)
{
    auto* current = m_configs->currentItem();
    if (!current || current->text(0) != name || QFileInfo(m_path).absoluteFilePath() != configFile) return;  // a stale answer
    m_diff->clear();
    const QString& lastRun = baseline.runId;
    if (lastRun.isEmpty()) {
        m_diff->addItem(tr("No run was launched from this config yet."));
        return;
    }
    if (!baseline.error.isEmpty()) {
        m_diff->addItem(baseline.error);
        return;
    }
    // The shown side was resolved by the click; the run's side came from the pool.
    const QMap<QString, QString>& values = m_shown;
    const QMap<QString, QString>* before = &baseline.values;
    int n = 0;
    for (auto it = values.begin(); it != values.end(); ++it)
        if (before->value(it.key()) != it.value()) {
            m_diff->addItem(tr("%1: %2 → %3").arg(it.key(), before->value(it.key(), tr("(unset)")), it.value()));
            ++n;
        }
    for (auto it = before->begin(); it != before->end(); ++it)
        if (!values.contains(it.key())) {
            m_diff->addItem(tr("%1: %2 → (unset)").arg(it.key(), it.value()));
            ++n;
        }
    m_diff->insertItem(0, n ? tr("%1 change(s) since run %2:").arg(n).arg(lastRun) : tr("Same as run %1.").arg(lastRun));
}

}  // namespace scaledesk::gui
