#pragma once

#include "core/expected.h"
#include "runs/runstore.h"

namespace scaledesk {

/// The configs of a workspace: <workspace>/configs/unet.yaml. The window's config editor edits this
/// file, and the command line's launches (submit, calibrate) read it unless --config-file names
/// another, so that `--config cpu-tiny` means the same from both. The first use copies the shipped
/// configs/unet.yaml (bundledTrainerSources) there, user-writable; the shipped file is never edited.
/// An error names the file that could not be made.
Expected<QString> workspaceConfigFile(const Workspace& workspace);

}  // namespace scaledesk
