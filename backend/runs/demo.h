#pragma once

#include "runs/runactions.h"

#include <QList>

namespace scaledesk {

/// The demo sweep: a small scaling sweep on this machine (the `cpu-demo` config of the bundled
/// unet.yaml: 1 and 2 ranks × ddp and fused), made with its data. Its runs go one at a time: runs
/// sharing two cores would measure each other, not the scaling. `scaledesk demo` and the window's
/// welcome panel both follow it.
struct DemoSweep {
    static QString name() { return QStringLiteral("demo"); }
    ClusterProfile profile;     ///< the built-in local profile
    QList<LaunchRequest> runs;  ///< one point each, in launch order
};

/// The demo of this workspace; an error when no trainer is found on this machine.
Expected<DemoSweep> demoSweep(const Workspace& workspace);

/// The index of the first demo run that does not exist yet (runs that exist are kept as they
/// are), or -1 when every one exists.
qsizetype nextDemoRun(const DemoSweep& demo, const Workspace& workspace);

}  // namespace scaledesk
