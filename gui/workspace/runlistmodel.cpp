#include "workspace/runlistmodel.h"

#include <QColor>
#include <QMimeData>
#include <QPainter>
#include <QPixmap>

namespace scaledesk::gui {

RunListModel::RunListModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunListModel::setRuns(const QList<RunSummary>& runs)
{
    beginResetModel();
    m_runs = runs;
    endResetModel();
}

const RunSummary* RunListModel::run(int row) const { return row >= 0 && row < m_runs.size() ? &m_runs[row] : nullptr; }

int RunListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_runs.size()); }
int RunListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QColor RunListModel::stateColor(RunState s)
{
    switch (s) {
    case RunState::Running: return QColor(0x00, 0x9E, 0x73);
    case RunState::Queued:
    case RunState::Submitting:
    case RunState::Requeued: return QColor(0xE6, 0x9F, 0x00);
    case RunState::Completed: return QColor(0x00, 0x72, 0xB2);
    case RunState::Failed:
    case RunState::SubmitFailed:
    case RunState::Lost: return QColor(0xD5, 0x5E, 0x00);
    default: return QColor(0x99, 0x99, 0x99);
    }
}

QVariant RunListModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= m_runs.size()) return {};
    const RunSummary& r = m_runs[index.row()];
    if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
        switch (index.column()) {
        case Id: return r.id;
        case State: return runStateName(r.state);
        case Strategy: return r.strategy;
        case Ranks:
            return role == Qt::DisplayRole ? QVariant(r.nodes * r.ranksPerNode)
                                           : QVariant(QStringLiteral("%1 node(s) × %2").arg(r.nodes).arg(r.ranksPerNode));
        case Sweep: return r.sweep;
        case Profile:  // an imported run has no profile: where it came from instead
            if (r.origin.isEmpty()) return r.profile;
            return role == Qt::DisplayRole ? tr("imported") : tr("Imported from %1; read-only").arg(r.origin);
        case Job: return r.jobId;
        case Created: return r.created.left(19).replace(QLatin1Char('T'), QLatin1Char(' '));
        case Detail: return role == Qt::DisplayRole ? r.message.simplified().left(120) : r.message;
        }
    }
    if (role == Qt::DecorationRole && index.column() == State) {
        QPixmap dot(10, 10);
        dot.fill(Qt::transparent);
        QPainter p(&dot);
        p.setRenderHint(QPainter::Antialiasing);
        p.setBrush(stateColor(r.state));
        p.setPen(Qt::NoPen);
        p.drawEllipse(0, 0, 10, 10);
        return dot;
    }
    if (role == Qt::UserRole) return r.id;
    if (role == SortRole) {
        switch (index.column()) {
        case Ranks: return r.nodes * r.ranksPerNode;
        case Created: return r.created;  // ISO UTC: sorts as the time does
        case Detail: return r.message;
        case State: return runStateName(r.state);
        default: return data(index, Qt::DisplayRole);
        }
    }
    return {};
}

QVariant RunListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* names[] = {"Run", "State", "Strategy", "Ranks", "Sweep", "Profile", "Job", "Created (UTC)", "Detail"};
    return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

Qt::ItemFlags RunListModel::flags(const QModelIndex& index) const
{
    return QAbstractTableModel::flags(index) | (index.isValid() ? Qt::ItemIsDragEnabled : Qt::NoItemFlags);
}

QStringList RunListModel::mimeTypes() const { return {QStringLiteral("application/x-scaledesk-runs")}; }

QMimeData* RunListModel::mimeData(const QModelIndexList& indexes) const
{
    QStringList ids;
    for (const QModelIndex& i : indexes)
        if (i.column() == 0 && i.row() < m_runs.size()) ids << m_runs[i.row()].id;
    auto* m = new QMimeData;
    m->setData(QStringLiteral("application/x-scaledesk-runs"), ids.join(QLatin1Char('\n')).toUtf8());
    return m;
}

}  // namespace scaledesk::gui
