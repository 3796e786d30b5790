#pragma once

#include "config/clusterprofile.h"
#include "runs/clusterprobe.h"

#include <QPointer>
#include <QWizard>

#include <memory>

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QRadioButton;
class QSpinBox;

namespace scaledesk {
class ClusterSession;
class RemoteOperation;
}  // namespace scaledesk

namespace scaledesk::gui {

class WorkspaceController;

/// Adds a cluster, or edits one (Qt Creator's Devices → Add/Test is the model):
/// 1. Connection: host (the SSH config's aliases offered), user, key, agent or password/2FA,
///    known_hosts, proxy jump, remote root.
/// 2. Cluster: a live connection test (host-key and passphrase questions in the usual dialogs),
///    then what the cluster offers: partitions, time limits, CPUs and GPUs per node (sinfo),
///    accounts and QOS (sacctmgr, where allowed), the module system.
/// 3. Job settings: those offered as choices.
/// 4. Trainer: preinstalled, built there from the bundled sources, or this machine's uploaded;
///    Next writes the profile (the same YAML as `scaledesk profiles add`, checked by its loader).
/// 5. Check: `profiles test`'s checks, with Deploy offered when the trainer is not there yet.
/// The work runs on the wizard's own session thread (the backend's probeCluster, testProfile and
/// deployTrainer); the window never waits.
class ClusterWizard : public QWizard {
    Q_OBJECT
public:
    /// `existing`: edit that profile (its name stays); null: add a new one.
    explicit ClusterWizard(WorkspaceController& controller, const ClusterProfile* existing = nullptr, QWidget* parent = nullptr);
    ~ClusterWizard() override;

    /// Host aliases of the SSH config ($SCALEDESK_SSH_CONFIG, else ~/.ssh/config): `Host` names
    /// without wildcards.
    static QStringList sshConfigHosts();

    /// The profile as the pages say it now.
    ClusterProfile profile() const;
    /// What the cluster page read (empty until it worked).
    const ClusterFacts& facts() const { return m_facts; }
    bool probed() const { return m_probed; }
    /// The profile file written by the trainer page, or empty.
    QString savedFile() const { return m_saved; }
    /// The last check's results (check page).
    const QList<ProfileCheck>& checks() const { return m_checks; }
    bool checking() const { return bool(m_op); }

    // The pages' fields, for tests (and the pages).
    QLineEdit* nameEdit() const { return m_name; }
    QComboBox* hostBox() const { return m_host; }
    QSpinBox* portBox() const { return m_port; }
    QLineEdit* userEdit() const { return m_user; }
    QComboBox* authBox() const { return m_auth; }
    QLineEdit* keyEdit() const { return m_key; }
    QLineEdit* knownHostsEdit() const { return m_knownHosts; }
    QLineEdit* proxyEdit() const { return m_proxy; }
    QLineEdit* rootEdit() const { return m_root; }
    QComboBox* partitionBox() const { return m_partition; }
    QComboBox* accountBox() const { return m_account; }
    QComboBox* qosBox() const { return m_qos; }
    QSpinBox* gpusBox() const { return m_gpus; }
    QSpinBox* cpusBox() const { return m_cpus; }
    QLineEdit* timeEdit() const { return m_time; }
    QComboBox* mpiBox() const { return m_mpi; }
    QRadioButton* preinstalledButton() const { return m_preinstalled; }
    QRadioButton* buildButton() const { return m_build; }
    QRadioButton* prebuiltButton() const { return m_prebuilt; }
    QLineEdit* trainerPathEdit() const { return m_trainerPath; }
    QPushButton* deployButton() const { return m_deploy; }
    QPlainTextEdit* probeLog() const { return m_probeLog; }
    QPlainTextEdit* checkLog() const { return m_checkLog; }

    enum Page { ConnectionPage, ClusterPage, SettingsPage, TrainerPage, CheckPage };

signals:
    void probeFinished(bool ok);
    void checkFinished(bool ok);
    void deployFinished(bool ok, const QString& text);

private:
    // The constructor's pages, in order: each makes its widgets and sets its page.
    void addConnectionPage(const ClusterProfile* existing);
    void addClusterPage();
    void addSettingsPage();
    void addTrainerPage(const ClusterProfile* existing);
    void addCheckPage();
    void probe();
    void check();
    void deploy();
    void fillSettings();
    bool save();
    ClusterSession* session();
    void dropSession();

    WorkspaceController& m_controller;
    bool m_editing = false;
    ClusterProfile m_base;  ///< what an edit starts from (keys the pages do not show are kept)
    ClusterFacts m_facts;
    bool m_probed = false;
    QString m_saved;
    QList<ProfileCheck> m_checks;
    ClusterSession* m_session = nullptr;
    QString m_sessionKey;  ///< the profile the session was made for (remade when it changes)
    QPointer<RemoteOperation> m_op;

    QLineEdit* m_name;
    QComboBox* m_host;
    QSpinBox* m_port;
    QLineEdit* m_user;
    QComboBox* m_auth;
    QLineEdit* m_key;
    QLineEdit* m_knownHosts;
    QLineEdit* m_proxy;
    QLineEdit* m_root;
    QPlainTextEdit* m_probeLog;
    QProgressBar* m_probeBusy;
    QComboBox* m_partition;
    QComboBox* m_account;
    QComboBox* m_qos;
    QSpinBox* m_gpus;
    QSpinBox* m_cpus;
    QLineEdit* m_time;
    QComboBox* m_mpi;
    QPlainTextEdit* m_setup;
    QLabel* m_modules;
    QRadioButton* m_preinstalled;
    QRadioButton* m_build;
    QRadioButton* m_prebuilt;
    QLineEdit* m_trainerPath;
    QLabel* m_saveError;
    QPlainTextEdit* m_checkLog;
    QProgressBar* m_checkBusy;
    QPushButton* m_deploy;
    QPushButton* m_cancelDeploy;
};

}  // namespace scaledesk::gui
