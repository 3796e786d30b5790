#pragma once

#include "runs/runstore.h"

#include <QAbstractTableModel>

namespace scaledesk::gui {

/// The workspace's runs for the navigator: a thin adapter over the run index (no run.json is read
/// to fill it), refreshed in one batch.
class RunListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Id, State, Strategy, Ranks, Sweep, Profile, Job, Created, Detail, ColumnCount };
    /// What the table sorts by: each column's value as stored (the ISO time, the whole detail),
    /// without the display's formatting, which sorting 100,000 rows would pay per comparison.
    static constexpr int SortRole = Qt::UserRole + 1;
    explicit RunListModel(QObject* parent = nullptr);
    void setRuns(const QList<RunSummary>& runs);
    const RunSummary* run(int row) const;

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    QStringList mimeTypes() const override;
    QMimeData* mimeData(const QModelIndexList& indexes) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

    static QColor stateColor(RunState state);

private:
    QList<RunSummary> m_runs;
};

}  // namespace scaledesk::gui
