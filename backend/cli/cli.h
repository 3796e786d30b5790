#pragma once

#include "core/status.h"

#include <QStringList>

#include <functional>
#include <vector>

namespace scaledesk {

struct ScalingReport;
struct Plan;
struct CompareRun;
enum class XAxis;

/// What the command line cannot do without a window system and hands to whoever can (the
/// `scaledesk` program passes the GUI library's renderers; a build without the GUI passes none).
struct CliHooks {
    /// Writes the report's plots into `dir` in each of `formats` (png, svg, pdf); the paths written
    /// go to `written`.
    std::function<Status(const ScalingReport& report, const QString& dir, const QStringList& formats, QStringList* written)> renderReport;
    /// Draws one tag of the runs (on `axis`, smoothed with TensorBoard's weight) into an image
    /// file (png, svg or pdf by suffix).
    std::function<Status(const std::vector<CompareRun>& runs, const QString& tag, XAxis axis, double smoothing, const QString& path)>
        renderSeries;
    /// Writes the plan's plots into `dir` in each of `formats` (png, svg, pdf); the paths written go
    /// to `written`.
    std::function<Status(const Plan& plan, const QString& dir, const QStringList& formats, QStringList* written)> renderPlan;
};

/// The `scaledesk` commands (profiles, deploy, submit, status, cancel, requeue, runs, report, plan,
/// calibrate, compare, tail, demo, import). Needs a QCoreApplication (or QApplication); returns the process exit
/// code: 0 success, 1 a failure that was reported, 2 a usage error (with the usage, and the
/// nearest command for a misspelt one).
int runCommandLine(int argc, char** argv, const CliHooks& hooks = {});

/// True only for the arguments that open the window: none, or `--workspace DIR` alone.
/// Everything else is the command line's, which reports what it does not know.
bool opensWindow(int argc, char** argv);

}  // namespace scaledesk
