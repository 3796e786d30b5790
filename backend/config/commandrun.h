#pragma once

#include "config/metricsources.h"
#include "core/expected.h"
#include "core/status.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

#include <utility>

namespace scaledesk {

struct RunPoint;

/// A run of the user's own training code instead of scaledesk-train: a run definition, a YAML file
/// in the configs tree (docs/own-code.md):
///
///     command: [python3, "{code}/train.py", --epochs, "3", --batch, "{local_batch}"]
///     code: /home/me/mymodel        # the folder the code lives in (relative: the definition's folder),
///                                   # sent at each launch; or code_on_cluster: /path/there
///     sync: {max_file_mb: 50, max_total_mb: 500}
///     setup: |                      # shell lines before the ranks start (module load, venv)
///       source ~/venvs/torch/bin/activate
///     env: {NCCL_DEBUG: WARN}
///     stop_signal: USR1             # what a stop sends every rank (USR1, USR2, TERM, HUP)
///     variants:                     # a sweep's --strategies pick among these
///       ddp: [--strategy, ddp]
///       horovod: [--strategy, horovod]
///
/// Each rank is one process with PyTorch's env:// variables (RANK, LOCAL_RANK, WORLD_SIZE,
/// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), as torchrun would set them. The command runs in the
/// run folder, where ScaleDesk puts its metrics module (scaledesk_metrics.py, on PYTHONPATH).
struct CommandRun {
    QString file;         ///< the definition's path (errors and the run record name it)
    QStringList command;  ///< argv, each item a template with {placeholders}
    /// The code: with `code`, a folder on this machine (absolute) that each launch sends to the
    /// cluster (runs/codesync.h: changed files only, .gitignore honoured, shared by content hash);
    /// with `code_on_cluster`, a path there (a template), used as it is. Empty: none.
    QString code;
    bool sendCode = false;                   ///< `code` (sent) rather than `code_on_cluster`
    qint64 syncMaxFileBytes = 50LL << 20;    ///< sync.max_file_mb
    qint64 syncMaxTotalBytes = 500LL << 20;  ///< sync.max_total_mb
    /// What a launch sent (filled by the submitter once the code is on the far side; `code` is then
    /// the copy there): the tree's hash, the folder it came from, its git commit, uncommitted changes.
    struct Sent {
        QString hash, source, gitCommit;
        bool gitDirty = false;
        QByteArray gitDiff;
    } sent;
    QString setup;                                    ///< shell lines, verbatim
    QList<std::pair<QString, QString>> environment;   ///< NAME -> value template
    QList<std::pair<QString, QStringList>> variants;  ///< name -> extra argument templates, in file order ("default": none)
    /// The signal a stop (checkpoint-and-stop, the time limit near) sends every rank: USR1 (as the
    /// trainer's), USR2, TERM or HUP. The script checks scaledesk_metrics.stop_requested().
    QString stopSignal = QStringLiteral("USR1");
    /// `torchrun`: one torchrun per node (this command, e.g. [torchrun] or [python3, -m,
    /// torch.distributed.run]), which starts the node's ranks and sets their env:// variables;
    /// empty: one process per rank. torchrun passes TERM and HUP on to its workers, not USR1, so a
    /// stop then sends TERM (stop_signal TERM or HUP only).
    QStringList torchrun;
    MetricSources metrics;  ///< `metrics`: TensorBoard, the job's output; none: scaledesk_metrics' files
    bool isSet() const { return !command.isEmpty(); }
    QStringList variantNames() const;
};

/// The placeholders a template may use: {run_id} {run_dir} {sweep} {variant} {nodes}
/// {ranks_per_node} {world_size} {repetition} {local_batch} {code}; `{{` and `}}` are literal braces.
QStringList commandPlaceholders();

/// Reads and checks a run definition: a mapping with `command` (a non-empty list of strings) and
/// optionally `code`, `setup`, `env`, `stop_signal`, `variants`. An unknown key, a value of the wrong type, a
/// placeholder that does not exist, an unclosed brace, an environment name that is not one or a
/// variant name that cannot be part of a run id is refused naming file:line:column.
Expected<CommandRun> loadCommandRun(const QString& file);

/// Whether any template of the definition (command, code, env, variants) uses {name}.
bool usesPlaceholder(const CommandRun& run, const QString& name);

/// Whether a YAML file is a run definition (a mapping with a top-level `command`) rather than a
/// file of named trainer configs. An unreadable file is neither (false).
bool isCommandRunFile(const QString& file);

struct SweepSpec;
/// A command that takes {local_batch} needs one: weak scaling's per-rank batch or strong scaling's
/// split of the global batch (a command run has no config to take it from). The error names the
/// definition.
Status checkCommandBatch(const CommandRun& run, const SweepSpec& spec);

/// The values a point's templates are filled with. `runDir` is the run folder on the far side.
struct CommandValues {
    const RunPoint* point = nullptr;
    QString runDir;
};

/// The argv of one rank of `point`: the command, then its variant's arguments (point.strategy),
/// each template filled in. Every item stays one word; the job script quotes it.
QStringList commandArguments(const CommandRun& run, const CommandValues& values);
/// The code folder filled in (empty when none is given).
QString commandCode(const CommandRun& run, const CommandValues& values);
/// The torchrun command filled in (empty: one process per rank).
QStringList commandTorchrun(const CommandRun& run, const CommandValues& values);
/// The environment filled in.
QList<std::pair<QString, QString>> commandEnvironment(const CommandRun& run, const CommandValues& values);

}  // namespace scaledesk
