#include "core/error.h"

namespace scaledesk {

QString errorCodeName(ErrorCode code)
{
    switch (code) {
    case ErrorCode::Usage: return QStringLiteral("usage");
    case ErrorCode::ActionRefused: return QStringLiteral("run.refused");
    case ErrorCode::ConfigInvalid: return QStringLiteral("config.invalid");
    case ErrorCode::ConfigMissing: return QStringLiteral("config.missing");
    case ErrorCode::ConfigYaml: return QStringLiteral("config.yaml");
    case ErrorCode::DataMake: return QStringLiteral("data.make");
    case ErrorCode::DataMissing: return QStringLiteral("data.missing");
    case ErrorCode::DemoTimeout: return QStringLiteral("demo.timeout");
    case ErrorCode::DeployBuild: return QStringLiteral("deploy.build");
    case ErrorCode::DeployCancelled: return QStringLiteral("deploy.cancelled");
    case ErrorCode::DeployIo: return QStringLiteral("deploy.io");
    case ErrorCode::DeployMismatch: return QStringLiteral("deploy.mismatch");
    case ErrorCode::DeployMissing: return QStringLiteral("deploy.missing");
    case ErrorCode::DeployPath: return QStringLiteral("deploy.path");
    case ErrorCode::DeploySources: return QStringLiteral("deploy.sources");
    case ErrorCode::ExportFormat: return QStringLiteral("export.format");
    case ErrorCode::ExportIo: return QStringLiteral("export.io");
    case ErrorCode::ImportIo: return QStringLiteral("import.io");
    case ErrorCode::ImportSource: return QStringLiteral("import.source");
    case ErrorCode::Keyring: return QStringLiteral("keyring");
    case ErrorCode::ProfileExists: return QStringLiteral("profile.exists");
    case ErrorCode::ProfileInvalid: return QStringLiteral("profile.invalid");
    case ErrorCode::ProfileIo: return QStringLiteral("profile.io");
    case ErrorCode::ProfileMissing: return QStringLiteral("profile.missing");
    case ErrorCode::ProfileName: return QStringLiteral("profile.name");
    case ErrorCode::ProfileUnknown: return QStringLiteral("profile.unknown");
    case ErrorCode::ProfileYaml: return QStringLiteral("profile.yaml");
    case ErrorCode::RunCorrupt: return QStringLiteral("run.corrupt");
    case ErrorCode::RunExists: return QStringLiteral("run.exists");
    case ErrorCode::RunId: return QStringLiteral("run.id");
    case ErrorCode::RunUnknown: return QStringLiteral("run.unknown");
    case ErrorCode::SchedulerParse: return QStringLiteral("scheduler.parse");
    case ErrorCode::SchedulerRejected: return QStringLiteral("scheduler.rejected");
    case ErrorCode::SchedulerSignal: return QStringLiteral("scheduler.signal");
    case ErrorCode::SchedulerUnavailable: return QStringLiteral("scheduler.unavailable");
    case ErrorCode::SchedulerUnknownJob: return QStringLiteral("scheduler.unknown-job");
    case ErrorCode::StoreIo: return QStringLiteral("store.io");
    case ErrorCode::SweepInvalid: return QStringLiteral("sweep.invalid");
    case ErrorCode::TrainerMissing: return QStringLiteral("trainer.missing");
    case ErrorCode::TransportAuth: return QStringLiteral("transport.auth");
    case ErrorCode::TransportConnect: return QStringLiteral("transport.connect");
    case ErrorCode::TransportHostKey: return QStringLiteral("transport.hostkey");
    case ErrorCode::TransportIo: return QStringLiteral("transport.io");
    case ErrorCode::TransportNoFile: return QStringLiteral("transport.nofile");
    case ErrorCode::TransportPermission: return QStringLiteral("transport.permission");
    case ErrorCode::TransportTimeout: return QStringLiteral("transport.timeout");
    }
    return QStringLiteral("unknown");
}

}  // namespace scaledesk
