#pragma once

#include "core/error.h"

#include <QMap>
#include <QPlainTextEdit>
#include <QProcess>
#include <QTimer>
#include <QWidget>

class QComboBox;
class QLabel;
class QListWidget;
class QTreeWidget;
class QSyntaxHighlighter;

namespace scaledesk::gui {

struct ConfigBaseline;

class WorkspaceController;

/// A YAML editor with line numbers and highlighting.
class YamlEdit : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit YamlEdit(QWidget* parent = nullptr);
    int gutterWidth() const;
    void paintGutter(QPaintEvent* e);

protected:
    void resizeEvent(QResizeEvent* e) override;

private:
    QWidget* m_gutter;
};

/// The config editor: YAML with line numbers and highlighting; validated as you type, by yaml-cpp
/// at once and by the trainer itself (`scaledesk-train --describe` on the text, in a separate
/// process) a moment later, errors underlined and listed with line:column; the named configs with
/// what they inherit from; the resolved view (which value comes from where); the difference to the
/// config of the last run launched from this file; unsaved text kept in the workspace's autosave
/// folder and offered back after a crash.
class ConfigEditor : public QWidget {
    Q_OBJECT
public:
    ConfigEditor(WorkspaceController& controller, QWidget* parent = nullptr);
    ~ConfigEditor() override;  ///< writes a pending autosave
    bool open(const QString& path);
    bool save();
    QString path() const { return m_path; }
    YamlEdit* editor() const { return m_edit; }
    QStringList errors() const;  ///< "line:column: message", as listed
    bool validating() const { return m_trainer.state() != QProcess::NotRunning || m_debounce.isActive(); }
    QString autosavePath() const;
    QString restoredFrom() const { return m_restored; }
    QTreeWidget* configsTree() const { return m_configs; }    ///< named config → what it inherits from
    QListWidget* errorsList() const { return m_errors; }      ///< each error of the config, wrapped at the pane's width
    QTreeWidget* resolvedTree() const { return m_resolved; }  ///< key, value, where it comes from
    QListWidget* changesList() const { return m_diff; }       ///< what changed since the newest run of the config

signals:
    void validityChanged(bool valid, const QString& why);

private:
    void textChanged();
    void writeAutosave();
    void validateNow();
    void showErrors(const QList<std::tuple<int, int, QString>>& errors);
    /// An error of a config reader as the error list shows it: its line and column (from "FILE:LINE:COL"), its message.
    static std::tuple<int, int, QString> locatedError(const Error& e);
    void refreshConfigs();
    void showResolved();
    void showChangesSince(const QString& configFile, const QString& configName, const ConfigBaseline& baseline);
    WorkspaceController& m_controller;
    QString m_path;
    QString m_restored;
    YamlEdit* m_edit;
    QSyntaxHighlighter* m_highlighter;
    QListWidget* m_errors;
    QTreeWidget* m_configs;
    QTreeWidget* m_resolved;
    QListWidget* m_diff;
    QLabel* m_banner;
    QTimer m_debounce;
    QTimer m_autosave;
    QProcess m_trainer;
    QString m_tempFile;
    QMap<QString, QString> m_shown;  ///< the resolved values on screen (key → value)
    QList<std::tuple<int, int, QString>> m_yamlErrors, m_trainerErrors;
};

}  // namespace scaledesk::gui
