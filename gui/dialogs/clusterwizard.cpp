#include "dialogs/clusterwizard.h"

#include "config/profiles.h"
#include "core/showntext.h"
#include "runs/clustersession.h"
#include "runs/deploy.h"
#include "workspace/workspacecontroller.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QVBoxLayout>
#include <QWizardPage>

Q_DECLARE_METATYPE(scaledesk::ClusterFacts)

namespace scaledesk::gui {

namespace {
// A page whose completeness, validation and entry are the wizard's lambdas.
class LambdaPage : public QWizardPage {
public:
    using QWizardPage::QWizardPage;
    std::function<bool()> complete;
    std::function<bool()> validate;
    std::function<void()> enter;
    bool isComplete() const override { return complete ? complete() : QWizardPage::isComplete(); }
    bool validatePage() override { return validate ? validate() : true; }
    void initializePage() override
    {
        if (enter) enter();
    }
    void changed() { emit completeChanged(); }
};

const QRegularExpression& safeName()
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"));
    return re;
}
}  // namespace

QStringList ClusterWizard::sshConfigHosts()
{
    QString path = qEnvironmentVariable("SCALEDESK_SSH_CONFIG");
    if (path.isEmpty()) path = QDir::homePath() + QStringLiteral("/.ssh/config");
    QFile f(path);
    QStringList hosts;
    if (!f.open(QIODevice::ReadOnly)) return hosts;
    // Only the Host lines are read here, to offer names; the connection reads the file with libssh.
    static const QRegularExpression hostLine(QStringLiteral("^\\s*Host\\s+(.+)$"), QRegularExpression::CaseInsensitiveOption);
    while (!f.atEnd()) {
        const auto m = hostLine.match(QString::fromUtf8(f.readLine()).trimmed());
        if (!m.hasMatch()) continue;
        for (const QString& h : m.captured(1).split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts))
            if (!h.contains(QLatin1Char('*')) && !h.contains(QLatin1Char('?')) && !h.startsWith(QLatin1Char('!')) && !hosts.contains(h))
                hosts << h;
    }
    return hosts;
}

ClusterWizard::ClusterWizard(WorkspaceController& controller, const ClusterProfile* existing, QWidget* parent)
    : QWizard(parent), m_controller(controller), m_editing(existing != nullptr)
{
    qRegisterMetaType<ClusterFacts>();
    setWindowTitle(m_editing ? tr("Edit cluster %1").arg(existing->name) : tr("Add a cluster"));
    setWizardStyle(QWizard::ClassicStyle);
    setOption(QWizard::NoBackButtonOnLastPage, false);
    resize(760, 600);
    if (existing) m_base = *existing;

    addConnectionPage(existing);
    addClusterPage();
    addSettingsPage();
    addTrainerPage(existing);
    addCheckPage();
}

void ClusterWizard::addConnectionPage(const ClusterProfile* existing)
{
    // 1. Connection
    auto* conn = new LambdaPage;
    conn->setTitle(tr("Connection"));
    conn->setSubTitle(tr("How to reach the cluster's login node over SSH."));
    m_name = new QLineEdit(existing ? existing->name : QString());
    m_name->setReadOnly(m_editing);
    m_name->setPlaceholderText(tr("a short name, e.g. perlmutter"));
    m_host = new QComboBox;
    m_host->setEditable(true);
    m_host->addItems(sshConfigHosts());
    m_host->setCurrentText(existing ? existing->host : QString());
    m_host->setToolTip(tr("A host name, or an alias of your SSH config (offered in the list)"));
    m_port = new QSpinBox;
    m_port->setRange(1, 65535);
    m_port->setValue(existing ? existing->port : 22);
    m_user = new QLineEdit(existing ? existing->user : QString());
    m_user->setPlaceholderText(tr("from the SSH config, else %1").arg(qEnvironmentVariable("USER")));
    m_auth = new QComboBox;
    m_auth->addItem(tr("SSH agent or my default keys (~/.ssh/id_*)"));
    m_auth->addItem(tr("A key file"));
    m_auth->addItem(tr("Password or one-time code (asked when connecting)"));
    m_key = new QLineEdit(existing ? existing->identityFile : QString());
    auto* browse = new QPushButton(tr("Browse…"));
    auto* keyRow = new QHBoxLayout;
    keyRow->addWidget(m_key);
    keyRow->addWidget(browse);
    m_auth->setCurrentIndex(existing && !existing->identityFile.isEmpty() ? 1 : 0);
    m_knownHosts = new QLineEdit(existing ? existing->knownHostsFile : QString());
    m_knownHosts->setPlaceholderText(QStringLiteral("~/.ssh/known_hosts"));
    m_proxy = new QLineEdit(existing ? existing->proxyJump : QString());
    m_proxy->setPlaceholderText(tr("[user@]jumphost[:port], optional"));
    m_root = new QLineEdit(existing ? existing->remoteRoot : QStringLiteral("scaledesk"));
    m_root->setToolTip(tr("Run folders go to <remote root>/runs; a relative path is under your home there"));
    auto* form = new QFormLayout(conn);
    form->addRow(tr("Name:"), m_name);
    form->addRow(tr("Host:"), m_host);
    form->addRow(tr("Port:"), m_port);
    form->addRow(tr("User:"), m_user);
    form->addRow(tr("Log in with:"), m_auth);
    form->addRow(tr("Key file:"), keyRow);
    form->addRow(tr("known_hosts:"), m_knownHosts);
    form->addRow(tr("Proxy jump:"), m_proxy);
    form->addRow(tr("Remote root:"), m_root);
    auto keyShown = [this, browse] {
        m_key->setEnabled(m_auth->currentIndex() == 1);
        browse->setEnabled(m_auth->currentIndex() == 1);
    };
    keyShown();
    connect(m_auth, &QComboBox::currentIndexChanged, this, keyShown);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("SSH key"), QDir::homePath() + QStringLiteral("/.ssh"));
        if (!f.isEmpty()) m_key->setText(f);
    });
    conn->complete = [this] {
        return safeName().match(m_name->text()).hasMatch() && !m_host->currentText().trimmed().isEmpty() &&
            !m_root->text().trimmed().isEmpty() && (m_auth->currentIndex() != 1 || !m_key->text().trimmed().isEmpty());
    };
    conn->validate = [this] {
        const QString name = m_name->text();
        const bool taken = name == QLatin1String("local") ||
            QFile::exists(m_controller.workspace().profilesDir() + QLatin1Char('/') + name + QStringLiteral(".yaml"));
        if (m_editing || !taken) return true;
        QMessageBox::warning(this, windowTitle(), tr("A profile named %1 exists; choose another name.").arg(m_name->text()));
        return false;
    };
    for (QLineEdit* e : {m_name, m_key, m_root}) connect(e, &QLineEdit::textChanged, conn, &LambdaPage::changed);
    connect(m_host, &QComboBox::currentTextChanged, conn, &LambdaPage::changed);
    connect(m_auth, &QComboBox::currentIndexChanged, conn, &LambdaPage::changed);
    setPage(ConnectionPage, conn);
}

void ClusterWizard::addClusterPage()
{
    // 2. Cluster: connect and read it.
    auto* disc = new LambdaPage;
    disc->setTitle(tr("Connection test and the cluster"));
    disc->setSubTitle(tr("Connects (questions about host keys and passphrases appear as dialogs), then reads the partitions "
                         "(sinfo), your accounts and QOS (sacctmgr) and the module system."));
    m_probeLog = new QPlainTextEdit;
    m_probeLog->setReadOnly(true);
    m_probeBusy = new QProgressBar;
    m_probeBusy->setRange(0, 0);
    m_probeBusy->hide();
    auto* again = new QPushButton(tr("Test again"));
    auto* dl = new QVBoxLayout(disc);
    dl->addWidget(m_probeLog);
    auto* dRow = new QHBoxLayout;
    dRow->addWidget(m_probeBusy, 1);
    dRow->addWidget(again);
    dl->addLayout(dRow);
    disc->complete = [this] { return m_probed && !m_op; };
    disc->enter = [this] { probe(); };
    connect(again, &QPushButton::clicked, this, &ClusterWizard::probe);
    connect(this, &ClusterWizard::probeFinished, disc, &LambdaPage::changed);
    setPage(ClusterPage, disc);
}

void ClusterWizard::addSettingsPage()
{
    // 3. Job settings, from what the cluster offers.
    auto* set = new LambdaPage;
    set->setTitle(tr("Job settings"));
    set->setSubTitle(tr("The defaults of this cluster's job scripts, chosen from what it offers."));
    m_partition = new QComboBox;
    m_partition->setEditable(true);
    m_account = new QComboBox;
    m_account->setEditable(true);
    m_qos = new QComboBox;
    m_qos->setEditable(true);
    m_gpus = new QSpinBox;
    m_gpus->setRange(0, 64);
    m_gpus->setToolTip(tr("0: CPU nodes (one rank per task); otherwise one rank per GPU"));
    m_cpus = new QSpinBox;
    m_cpus->setRange(1, 4096);
    m_time = new QLineEdit;
    m_time->setToolTip(tr("HH:MM:SS, D-HH:MM:SS, MM or UNLIMITED"));
    m_mpi = new QComboBox;
    m_mpi->addItem(QStringLiteral("pmix"));
    m_mpi->addItem(QStringLiteral("none"));
    m_mpi->setToolTip(tr("srun --mpi=…; none runs plain srun and the trainer uses gloo over SLURM's variables"));
    m_setup = new QPlainTextEdit;
    m_setup->setPlaceholderText(tr("shell lines before srun, e.g. module load cmake gcc openmpi"));
    m_setup->setMaximumHeight(90);
    m_modules = new QLabel;
    m_modules->setTextFormat(Qt::PlainText);  // the module system's name comes from the cluster
    m_modules->setWordWrap(true);
    auto* sf = new QFormLayout(set);
    sf->addRow(tr("Partition:"), m_partition);
    sf->addRow(tr("Account:"), m_account);
    sf->addRow(tr("QOS:"), m_qos);
    sf->addRow(tr("GPUs per node:"), m_gpus);
    sf->addRow(tr("CPUs per task:"), m_cpus);
    sf->addRow(tr("Time limit:"), m_time);
    sf->addRow(tr("srun --mpi:"), m_mpi);
    sf->addRow(tr("Setup lines:"), m_setup);
    sf->addRow(QString(), m_modules);
    connect(m_partition, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i < 0 || i >= m_facts.partitions.size()) return;
        const PartitionInfo& p = m_facts.partitions[i];
        m_gpus->setValue(p.gpusPerNode);
        m_cpus->setValue(p.gpusPerNode > 0 && p.cpusPerNode > 0 ? std::max(1, p.cpusPerNode / p.gpusPerNode) : 1);
    });
    set->enter = [this] { fillSettings(); };
    set->complete = [this] { return isSlurmTimeLimit(m_time->text().trimmed()); };
    connect(m_time, &QLineEdit::textChanged, set, &LambdaPage::changed);
    setPage(SettingsPage, set);
}

void ClusterWizard::addTrainerPage(const ClusterProfile* existing)
{
    // 4. Trainer, then the profile is written.
    auto* tr_ = new LambdaPage;
    tr_->setTitle(tr("Trainer"));
    tr_->setSubTitle(tr("How jobs find scaledesk-train there. Next writes the profile."));
    m_preinstalled = new QRadioButton(tr("Installed there already, at:"));
    m_trainerPath = new QLineEdit(existing ? existing->trainerPath : QString());
    m_trainerPath->setPlaceholderText(QStringLiteral("/path/to/scaledesk-train"));
    m_build = new QRadioButton(tr("Deploy: build it there from the sources this app carries (CMake, libtorch and MPI needed there)"));
    m_prebuilt = new QRadioButton(tr("Deploy: upload this machine's trainer (only when the cluster matches this machine)"));
    (existing && existing->trainerDeploy ? (existing->trainerPrebuilt ? m_prebuilt : m_build)
         : existing                      ? m_preinstalled
                                         : m_build)
        ->setChecked(true);
    m_saveError = new QLabel;
    m_saveError->setTextFormat(Qt::PlainText);
    m_saveError->setWordWrap(true);
    m_saveError->setStyleSheet(QStringLiteral("color: #c0392b"));
    auto* tl = new QVBoxLayout(tr_);
    tl->addWidget(m_preinstalled);
    tl->addWidget(m_trainerPath);
    tl->addWidget(m_build);
    tl->addWidget(m_prebuilt);
    tl->addStretch(1);
    tl->addWidget(m_saveError);
    tr_->complete = [this] { return !m_preinstalled->isChecked() || !m_trainerPath->text().trimmed().isEmpty(); };
    tr_->validate = [this] { return save(); };
    for (QRadioButton* b : {m_preinstalled, m_build, m_prebuilt}) connect(b, &QRadioButton::toggled, tr_, &LambdaPage::changed);
    connect(m_trainerPath, &QLineEdit::textChanged, tr_, &LambdaPage::changed);
    setPage(TrainerPage, tr_);
}

void ClusterWizard::addCheckPage()
{
    // 5. Check (and deploy).
    auto* chk = new LambdaPage;
    chk->setTitle(tr("Check"));
    chk->setSubTitle(tr("The checks of `scaledesk profiles test`. The profile is saved; Finish closes."));
    m_checkLog = new QPlainTextEdit;
    m_checkLog->setReadOnly(true);
    m_checkBusy = new QProgressBar;
    m_checkBusy->setRange(0, 0);
    m_checkBusy->hide();
    m_deploy = new QPushButton(tr("Deploy the trainer"));
    m_deploy->setEnabled(false);
    m_cancelDeploy = new QPushButton(tr("Cancel"));
    m_cancelDeploy->hide();
    auto* checkAgain = new QPushButton(tr("Check again"));
    auto* cl = new QVBoxLayout(chk);
    cl->addWidget(m_checkLog);
    auto* cRow = new QHBoxLayout;
    cRow->addWidget(m_checkBusy, 1);
    cRow->addWidget(m_cancelDeploy);
    cRow->addWidget(m_deploy);
    cRow->addWidget(checkAgain);
    cl->addLayout(cRow);
    chk->enter = [this] { check(); };
    chk->complete = [this] { return !m_op; };
    connect(checkAgain, &QPushButton::clicked, this, &ClusterWizard::check);
    connect(m_deploy, &QPushButton::clicked, this, &ClusterWizard::deploy);
    connect(m_cancelDeploy, &QPushButton::clicked, this, [this] {
        if (m_op) m_op->cancel();
    });
    connect(this, &ClusterWizard::checkFinished, chk, &LambdaPage::changed);
    connect(this, &ClusterWizard::deployFinished, chk, &LambdaPage::changed);
    setPage(CheckPage, chk);
}

ClusterWizard::~ClusterWizard() { dropSession(); }

ClusterProfile ClusterWizard::profile() const
{
    ClusterProfile p = m_base;
    p.kind = ProfileKind::SshSlurm;
    p.name = m_name->text().trimmed();
    p.host = m_host->currentText().trimmed();
    p.port = m_port->value();
    p.user = m_user->text().trimmed();
    p.identityFile = m_auth->currentIndex() == 1 ? m_key->text().trimmed() : QString();
    p.knownHostsFile = m_knownHosts->text().trimmed();
    p.proxyJump = m_proxy->text().trimmed();
    p.remoteRoot = m_root->text().trimmed();
    const int pi = m_partition->currentIndex();
    p.slurm.partition = pi >= 0 && pi < m_facts.partitions.size() && m_partition->currentText() == m_partition->itemText(pi)
        ? m_facts.partitions[pi].name
        : m_partition->currentText().section(QLatin1Char(' '), 0, 0).trimmed();
    p.slurm.account = m_account->currentText().trimmed();
    p.slurm.qos = m_qos->currentText().trimmed();
    p.slurm.gpusPerNode = m_gpus->value();
    p.slurm.cpusPerTask = m_cpus->value();
    if (!m_time->text().trimmed().isEmpty()) p.slurm.timeLimit = m_time->text().trimmed();
    p.slurm.mpi = m_mpi->currentText();
    p.setup = m_setup->toPlainText().trimmed();
    p.trainerDeploy = !m_preinstalled->isChecked();
    p.trainerPrebuilt = m_prebuilt->isChecked();
    p.trainerPath = m_preinstalled->isChecked() ? m_trainerPath->text().trimmed() : QString();
    return p;
}

ClusterSession* ClusterWizard::session()
{
    // A session per connection setting: a changed host or key connects afresh.
    const ClusterProfile p = profile();
    const QString key = QString::fromUtf8(clusterProfileYaml(p));
    if (m_session && key == m_sessionKey) return m_session;
    dropSession();
    ProfileConnection pc = connectProfile(p, m_controller.prompter().callbacks(p.name));
    m_session = new ClusterSession(std::move(pc.transport), std::move(pc.scheduler));
    m_sessionKey = key;
    return m_session;
}

void ClusterWizard::dropSession()
{
    delete m_session;  // waits for a running operation (the prompter answers no while the window closes)
    m_session = nullptr;
}

void ClusterWizard::probe()
{
    if (m_op) return;
    m_probed = false;
    m_probeLog->clear();
    m_probeBusy->show();
    const ClusterProfile p = profile();
    m_probeLog->appendPlainText(tr("Connecting to %1…").arg(p.host));
    m_op = session()->run(QStringLiteral("probe"), [p](Transport& t, Scheduler&, const ClusterSession::Progress& progress, const auto&) {
        const QList<ProfileCheck> c = testProfile(t, p, true, [&](const ProfileCheck& k) { progress(WorkspaceController::checkLine(k)); });
        if (c.isEmpty() || !c.first().ok)
            return Expected<QVariant>(Error{ErrorCode::TransportConnect, c.isEmpty() ? QString() : c.first().detail, t.describe()});
        progress(tr("Reading the cluster (sinfo, sacctmgr, modules)…"));
        auto facts = probeCluster(t);
        if (!facts) return Expected<QVariant>(facts.error());
        return Expected<QVariant>(QVariant::fromValue(*facts));
    });
    connect(m_op, &RemoteOperation::progress, this, [this](const QString& m) { m_probeLog->appendPlainText(shownText(m)); });
    connect(m_op, &RemoteOperation::succeeded, this, [this](const QVariant& v) {
        m_facts = v.value<ClusterFacts>();
        m_probed = true;
        QStringList text;
        text << tr("%1 on %2").arg(m_facts.slurmVersion, m_facts.host);
        for (const PartitionInfo& p : m_facts.partitions)
            text << tr("partition %1%2: %3, %4 CPUs, %5 GPUs per node, time limit %6")
                        .arg(p.name, p.isDefault ? tr(" (default)") : QString())
                        .arg(p.nodes == 1 ? tr("1 node") : tr("%1 nodes").arg(p.nodes))
                        .arg(p.cpusPerNode)
                        .arg(p.gpusPerNode)
                        .arg(p.timeLimit);
        text
            << (m_facts.accounts.isEmpty()
                    ? tr("accounts: none read (%1)").arg(m_facts.accountsNote)
                    : tr("accounts: %1; QOS: %2").arg(m_facts.accounts.join(QStringLiteral(", ")), m_facts.qos.join(QStringLiteral(", "))));
        text << (m_facts.moduleSystem.isEmpty() ? tr("no module system found") : tr("modules: %1").arg(m_facts.moduleSystem));
        m_probeLog->appendPlainText(shownText(text.join(QLatin1Char('\n'))));
    });
    connect(m_op, &RemoteOperation::failed, this, [this](const Error& e) {
        m_probeLog->appendPlainText(tr("✘ %1").arg(shownText(e.text())));
        m_probeLog->appendPlainText(tr("Check the host, user and key on the previous page, then Test again."));
    });
    connect(m_op, &RemoteOperation::finished, this, [this] {
        m_op = nullptr;  // it deletes itself later; the page may go on now
        m_probeBusy->hide();
        emit probeFinished(m_probed);
    });
}

void ClusterWizard::fillSettings()
{
    const ClusterProfile keep = m_editing ? m_base : ClusterProfile();
    m_partition->clear();
    int chosen = -1;
    for (qsizetype i = 0; i < m_facts.partitions.size(); ++i) {
        const PartitionInfo& p = m_facts.partitions[i];
        m_partition->addItem(
            tr("%1 — %2 nodes, %3 CPUs, %4 GPUs, max %5").arg(p.name).arg(p.nodes).arg(p.cpusPerNode).arg(p.gpusPerNode).arg(p.timeLimit));
        if ((keep.slurm.partition.isEmpty() && p.isDefault) || p.name == keep.slurm.partition) chosen = int(i);
    }
    if (chosen < 0 && !keep.slurm.partition.isEmpty()) m_partition->setEditText(keep.slurm.partition);
    if (chosen >= 0) m_partition->setCurrentIndex(chosen);
    m_account->clear();
    m_account->addItem(QString());
    m_account->addItems(m_facts.accounts);
    m_account->setCurrentText(keep.slurm.account);
    m_qos->clear();
    m_qos->addItem(QString());
    m_qos->addItems(m_facts.qos);
    m_qos->setCurrentText(keep.slurm.qos);
    if (m_editing) {
        m_gpus->setValue(keep.slurm.gpusPerNode);
        m_cpus->setValue(keep.slurm.cpusPerTask);
        m_mpi->setCurrentText(keep.slurm.mpi);
        m_setup->setPlainText(keep.setup);
    }
    // 30 minutes, or the partition's limit when it is shorter.
    m_time->setText(m_editing ? keep.slurm.timeLimit : QStringLiteral("00:30:00"));
    m_modules->setText(m_facts.moduleSystem.isEmpty()
                           ? tr("No module system was found there.")
                           : tr("%1 is there: load what the trainer needs in the setup lines.").arg(m_facts.moduleSystem));
}

bool ClusterWizard::save()
{
    auto written = saveProfile(m_controller.workspace(), profile(), m_editing || !m_saved.isEmpty());
    if (!written) {
        m_saveError->setText(written.error().text());
        return false;
    }
    m_saveError->clear();
    m_saved = *written;
    m_controller.forgetProfile(profile().name);  // the window's session reconnects with the new file
    return true;
}

void ClusterWizard::check()
{
    if (m_op) return;
    m_checks.clear();
    m_checkLog->clear();
    m_checkBusy->setRange(0, 0);
    m_checkBusy->show();
    m_deploy->setEnabled(false);
    const ClusterProfile p = profile();
    m_op = session()->run(QStringLiteral("check"), [p](Transport& t, Scheduler&, const ClusterSession::Progress& progress, const auto&) {
        QVariantList out;
        for (const ProfileCheck& c : testProfile(t, p, false, [&](const ProfileCheck& k) { progress(WorkspaceController::checkLine(k)); }))
            out << QVariant(QStringList{c.what, c.ok ? QStringLiteral("1") : QString(), c.detail});
        return Expected<QVariant>(out);
    });
    connect(m_op, &RemoteOperation::progress, this, [this](const QString& m) { m_checkLog->appendPlainText(shownText(m)); });
    connect(m_op, &RemoteOperation::succeeded, this, [this](const QVariant& v) {
        for (const QVariant& c : v.toList()) {
            const QStringList f = c.toStringList();
            m_checks << ProfileCheck{f.value(0), !f.value(1).isEmpty(), f.value(2)};
        }
    });
    connect(m_op, &RemoteOperation::failed, this,
            [this](const Error& e) { m_checkLog->appendPlainText(tr("✘ %1").arg(shownText(e.text()))); });
    connect(m_op, &RemoteOperation::finished, this, [this, p] {
        m_op = nullptr;
        m_checkBusy->hide();
        const bool ok = !m_checks.isEmpty() && std::all_of(m_checks.begin(), m_checks.end(), [](const ProfileCheck& c) { return c.ok; });
        const bool trainerMissing = std::any_of(m_checks.begin(), m_checks.end(),
                                                [](const ProfileCheck& c) { return c.what == QLatin1String("trainer") && !c.ok; });
        m_deploy->setEnabled(p.trainerDeploy && !m_checks.isEmpty() && m_checks.first().ok);
        if (trainerMissing && p.trainerDeploy) m_checkLog->appendPlainText(tr("The trainer is not there yet: press Deploy the trainer."));
        if (ok) m_checkLog->appendPlainText(tr("All checks passed. Runs can be launched on %1.").arg(p.name));
        emit checkFinished(ok);
    });
}

void ClusterWizard::deploy()
{
    if (m_op) return;
    const ClusterProfile p = profile();
    m_checkBusy->setRange(0, 0);
    m_checkBusy->show();
    m_cancelDeploy->show();
    m_deploy->setEnabled(false);
    m_checkLog->appendPlainText(tr("Deploying the trainer to %1…").arg(p.name));
    m_op = WorkspaceController::startDeploy(*session(), p);
    auto ok = std::make_shared<bool>(false);
    auto text = std::make_shared<QString>();
    connect(m_op, &RemoteOperation::progress, this, [this](const QString& m, qint64 done, qint64 total) {
        if (total > 0) {
            m_checkBusy->setRange(0, 1000);
            m_checkBusy->setValue(int(1000.0 * double(done) / double(total)));
            m_checkBusy->setFormat(m);
            m_checkBusy->setTextVisible(true);
        } else {
            m_checkLog->appendPlainText(shownText(m));
        }
    });
    connect(m_op, &RemoteOperation::succeeded, this, [ok, text](const QVariant& v) {
        *ok = true;
        *text = v.toString();
    });
    connect(m_op, &RemoteOperation::failed, this, [text](const Error& e) { *text = e.text(); });
    connect(m_op, &RemoteOperation::cancelled, this, [text] { *text = QStringLiteral("the deploy was cancelled"); });
    connect(m_op, &RemoteOperation::finished, this, [this, ok, text] {
        m_op = nullptr;
        m_cancelDeploy->hide();
        m_checkBusy->hide();
        m_checkBusy->setTextVisible(false);
        m_checkLog->appendPlainText((*ok ? QStringLiteral("✔ ") : QStringLiteral("✘ ")) + shownText(*text));
        emit deployFinished(*ok, *text);
        if (*ok)
            QMetaObject::invokeMethod(this, &ClusterWizard::check, Qt::QueuedConnection);  // and check again
        else
            m_deploy->setEnabled(true);
    });
}

}  // namespace scaledesk::gui
