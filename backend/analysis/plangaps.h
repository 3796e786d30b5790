#pragma once

#include "analysis/perfmodel.h"
#include "analysis/planner.h"

#include <QList>
#include <QString>

#include <vector>

namespace scaledesk {

/// A quantity a prediction needs that was never measured, and the command that measures it.
/// A point with a gap is shown as "not measured" with the command, never as a number the model
/// only guessed (no silent stand-in: within-node bandwidth for across nodes, an allreduce for
/// zero1's collectives).
struct PlanGap {
    QString what;     ///< "communication across nodes (only within a node was timed)"
    QString command;  ///< "scaledesk calibrate --profile P --nodes 2 --ranks-per-node 4"
};

/// The gaps of a prediction of `strategy` at `ranks` ranks on `nodes` nodes from `model`:
/// - more than one rank and no collective timed at all (neither a calibration nor a multi-rank run);
/// - more than one node and only within-node timings;
/// - zero1 at more than one rank without its reduce-scatter and allgather timed.
/// `profile`: named in the commands (empty: left out); `configFlags`: calibrateConfigFlags of the
/// runs, so that the command times their config's own step as the compute (empty: left out).
QList<PlanGap> planGaps(const PerfModel& model, const QString& strategy, int ranks, int nodes, const QString& profile,
                        const QString& configFlags = {});

/// "scaledesk calibrate [--profile P] --nodes N --ranks-per-node R [extra] [configFlags]": the one
/// place the plan's hints spell a calibration (planGaps' commands, planlimits' contention hint).
QString calibrateCommand(const QString& profile, int nodes, int ranksPerNode, const QString& extra = {}, const QString& configFlags = {});

/// "--config NAME", with "--config-file FILE" where the runs were launched from another YAML than
/// the workspace's: the named config all of `runs` trained (PlanRunInput::config), each value a
/// shellWord() (quoted where the shell would split it); empty where they trained different ones or
/// none is recorded.
QString calibrateConfigFlags(const std::vector<PlanRunInput>& runs);

}  // namespace scaledesk
