#pragma once

#include "analysis/comparison.h"

#include <QWidget>

#include <vector>

class QComboBox;
class QListWidget;
class QSlider;
class QTableWidget;
class QCheckBox;
class QLabel;

namespace scaledesk::gui {

class SeriesChart;
class WorkspaceController;

/// Runs side by side: drop runs from the navigator, pick a tag and the x axis (step, relative or
/// wall time), smoothing (TensorBoard's), log y; the table holds final and best values and the
/// config keys that differ.
class CompareView : public QWidget {
    Q_OBJECT
public:
    CompareView(WorkspaceController& controller, QWidget* parent = nullptr);
    void setRuns(const QStringList& runIds);
    QStringList runs() const { return m_ids; }
    /// The first chart (one per chosen tag).
    SeriesChart* chart() const { return m_charts.value(0); }
    QList<SeriesChart*> charts() const { return m_charts; }
    void setTags(const QStringList& tags);
    /// The tags offered: the usual ones, then every other tag of the runs shown.
    QStringList tagChoices() const;
    QSlider* smoothingSlider() const { return m_smoothing; }
    QString smoothingText() const;  ///< the weight shown beside the slider
    QString hint() const;           ///< what the view says to do next ("" when two or more runs are in)

protected:
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;

private:
    void reload();
    void loaded(std::vector<CompareRun> runs);
    void redraw();
    void updateHint();
    WorkspaceController& m_controller;
    QStringList m_ids;
    std::vector<CompareRun> m_runs;
    int m_generation = 0;  // a reload started later wins over one that finishes later
    QListWidget* m_list;
    QListWidget* m_tags;
    QCheckBox* m_logY;
    QWidget* m_chartBox;
    QComboBox* m_x;
    QSlider* m_smoothing;
    QLabel* m_smoothingValue;
    QLabel* m_hint;
    QList<SeriesChart*> m_charts;
    QTableWidget* m_table;
};

}  // namespace scaledesk::gui
