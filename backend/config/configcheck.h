#pragma once

#include "core/status.h"

#include <QString>
#include <QStringList>

namespace scaledesk {

/// The command line that checks named configs with the trainer's own rules (types, values,
/// cross-key rules): `<trainer> --yaml_config FILE --check_configs NAMES --threads 1`. `names` is
/// "all" or a comma-separated list. The window's config editor runs it as the user types.
QStringList trainerConfigCheckArguments(const QString& configFile, const QString& names);

/// Runs that check to its end (30 s at most) before a launch: Done when the trainer accepts the
/// config, else ErrorCode::ConfigInvalid with the trainer's first error line as it printed it
/// ("FILE:LINE:COL: what"). A trainer that cannot be run, crashes or does not answer is an error
/// too (ErrorCode::TrainerMissing), never a silent pass.
Status checkConfigWithTrainer(const QString& trainer, const QString& configFile, const QString& configName);

}  // namespace scaledesk
