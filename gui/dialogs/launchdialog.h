#pragma once

#include "runs/runactions.h"

#include <QDialog>

#include <memory>

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QFormLayout;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSpinBox;
class QToolButton;

namespace scaledesk::gui {

/// Launch a run or a scaling sweep: profile, config, nodes, ranks per node, strategies,
/// repetitions, scaling type, time limit. When the config file is a run definition (the user's own
/// code, docs/own-code.md), the form takes its variants and a per-rank batch instead of a named
/// config and the trainer's strategies. Shows the number of jobs and node-hours, the planner's
/// prediction of each point (epoch time, efficiency, node-hours per epoch; fitted to the completed
/// runs of the same config on the profile, with its calibrations), previews the job script of any
/// point, and keeps Launch disabled, saying why, while anything is invalid.
class LaunchDialog : public QDialog {
    Q_OBJECT
public:
    LaunchDialog(const QString& workspaceRoot, const QString& configFile, QWidget* parent = nullptr);

    /// Valid only when canLaunch(). The trainer path is left for the launch to find.
    LaunchRequest request() const;
    bool canLaunch() const { return m_valid; }
    QString whyNot() const { return m_why; }
    QString summary() const;
    QString preview() const;
    /// The prediction as shown (plain text): a row per point, or why there is none, or "Predicting…".
    QString prediction() const;

    // For tests and scripting: the form's fields.
    QComboBox* profileCombo() const { return m_profile; }
    QLineEdit* nodesEdit() const { return m_nodes; }
    QLineEdit* ranksEdit() const { return m_ranks; }
    QLineEdit* timeEdit() const { return m_time; }
    QComboBox* configCombo() const { return m_config; }
    QLineEdit* configFileEdit() const { return m_configFile; }
    /// A run definition's variants to launch, comma-separated (empty: all of them).
    QLineEdit* variantsEdit() const { return m_variants; }
    QSpinBox* localBatchSpin() const { return m_localBatch; }
    /// Whether the config file is a run definition (the user's own code).
    bool launchesCommand() const { return m_isCommand; }
    QLineEdit* sweepEdit() const { return m_sweep; }
    QCheckBox* makeDataCheck() const { return m_makeData; }
    QCheckBox* stopOnFailureCheck() const { return m_stopOnFailure; }
    /// Shows or folds the job script preview.
    QToolButton* scriptToggle() const { return m_scriptToggle; }
    QDialogButtonBox* buttons() const { return m_buttons; }

signals:
    /// The prediction was (re)computed for the form as it is now.
    void predictionUpdated();

protected:
    void showEvent(QShowEvent* e) override;

private:
    void fitHeight();
    /// Reads the config file: its named configs, or the run definition it is; shows the rows that apply.
    void reloadConfigFile();
    /// The sweep's strategies (the trainer's checkboxes, or the definition's variants) and batch.
    Status fillStrategies(SweepSpec& spec, int sweepBatch);
    void revalidate();
    /// Starts the prediction of m_points on a pool thread (the newest request wins).
    void predict();
    /// A sweep name no run uses yet: <config>-<yyyymmdd>-<n>.
    QString uniqueSweepName() const;
    /// The defaults that follow the profile and the config (the name, generating data for the cpu
    /// configs on the local profile), unless the user has set them.
    void applyDefaults();
    /// The last launch's settings on the selected profile, kept in QSettings.
    void restoreSettings();
    void saveSettings() const;
    QString m_workspace;
    /// The workspace's run index, opened once on first use (every edit of the form asks it for the
    /// sweep's runs so far); null where it cannot be opened.
    std::unique_ptr<RunStore> m_store;
    bool m_storeTried = false;
    QComboBox* m_profile;
    QLineEdit* m_configFile;
    QComboBox* m_config;
    QLineEdit* m_sweep;
    QLineEdit* m_nodes;
    QLineEdit* m_ranks;
    QCheckBox* m_ddp;
    QCheckBox* m_fused;
    QCheckBox* m_zero1;
    QHBoxLayout* m_strategies;
    QLineEdit* m_variants;
    QSpinBox* m_localBatch;
    QFormLayout* m_form;
    bool m_isCommand = false;
    CommandRun m_command;  ///< when m_isCommand and it reads: the run definition
    Error m_commandError;  ///< when m_isCommand and it does not
    QSpinBox* m_reps;
    QComboBox* m_scaling;
    QSpinBox* m_globalBatch;
    QLineEdit* m_time;
    QCheckBox* m_makeData;
    QCheckBox* m_stopOnFailure;
    QLabel* m_summary;
    QLabel* m_prediction;
    int m_predictions = 0;
    QComboBox* m_previewPoint;
    QPlainTextEdit* m_preview;
    QToolButton* m_scriptToggle;  ///< folds the job script in and out (folded by default)
    QWidget* m_scriptBox;
    QDialogButtonBox* m_buttons;
    bool m_valid = false;
    bool m_sweepEdited = false;
    bool m_makeDataEdited = false;
    QString m_why;
    QList<RunPoint> m_points;
    ClusterProfile m_selected;
};

}  // namespace scaledesk::gui
