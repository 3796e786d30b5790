#pragma once

#include <QMetaType>
#include <QString>

namespace scaledesk {

/// What kind of failure an Error is. Callers branch on these (a missing file is not a refused
/// login); people read Error::message. errorCodeName() gives the stable text, e.g. "transport.nofile".
enum class ErrorCode {
    Usage,          ///< a command-line or API misuse that the caller can fix
    ActionRefused,  ///< the run is in a state where the action makes no sense
    ConfigInvalid,
    ConfigMissing,
    ConfigYaml,
    DataMake,
    DataMissing,  ///< a run's data files could not be found where its job would read them
    DemoTimeout,
    DeployBuild,
    DeployCancelled,
    DeployIo,
    DeployMismatch,
    DeployMissing,
    DeployPath,
    DeploySources,
    ExportFormat,
    ExportIo,
    ImportIo,      ///< an imported run could not be written into the workspace
    ImportSource,  ///< a path to import is missing or holds no run
    Keyring,
    ProfileExists,
    ProfileInvalid,
    ProfileIo,
    ProfileMissing,
    ProfileName,
    ProfileUnknown,
    ProfileYaml,
    RunCorrupt,
    RunExists,
    RunId,
    RunUnknown,
    SchedulerParse,
    SchedulerRejected,
    SchedulerSignal,
    SchedulerUnavailable,  ///< SLURM's commands do not run there
    SchedulerUnknownJob,   ///< the scheduler no longer knows the job (SLURM's MinJobAge passed)
    StoreIo,
    SweepInvalid,
    TrainerMissing,
    TransportAuth,
    TransportConnect,
    TransportHostKey,
    TransportIo,
    TransportNoFile,
    TransportPermission,
    TransportTimeout,
};

/// "transport.nofile", "run.refused", …: stable across versions, for logs and JSON output.
QString errorCodeName(ErrorCode code);

/// A failure that happens in real life (bad input, unreachable host, rejected job): a code, a
/// message for people, and where it happened (file:line:column, or a host) when known.
struct Error {
    ErrorCode code = ErrorCode::Usage;
    QString message;
    QString location;

    /// "location: message", or the message alone.
    QString text() const { return location.isEmpty() ? message : location + QStringLiteral(": ") + message; }
};

}  // namespace scaledesk

Q_DECLARE_METATYPE(scaledesk::Error)
