#pragma once

// The planner's parts (makePlan builds a plan from them, in this order), shared by its files:
// planfit.cpp (the model's fits: compute, collectives, the base, the bands, the learning curve),
// planpoints.cpp (each predicted point, its bounds and the plan's warnings); planError() and kNaN
// for every planner file. Not an interface: analysis/planner.h is.
#include "analysis/learningcurve.h"
#include "analysis/planner.h"
#include "core/error.h"

#include <QList>
#include <QMap>
#include <QPair>
#include <QString>
#include <QStringList>

#include <limits>
#include <vector>

namespace scaledesk::planparts {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

inline Error planError(const QString& message, const QString& location = QString()) { return Error{ErrorCode::Usage, message, location}; }

// What makePlan's parts share while they build one plan, in the order makePlan calls them.
struct PlanFit {
    PlanFit(Plan& p, const QString& sw, const std::vector<PlanRunInput>& all, const std::vector<PlanRunInput>& fitted,
            const QList<CommSample>& bench, const QStringList& sources, const PlanOptions& o, int barriers)
        : plan(p), sweep(sw), runs(all), used(fitted), benchmark(bench), benchmarkSources(sources), options(o), barrierLeftOut(barriers)
    {}
    Plan& plan;
    const QString& sweep;
    const std::vector<PlanRunInput>& runs;  ///< every run (the learning curve reads them all)
    const std::vector<PlanRunInput>& used;  ///< the runs with step records to fit
    const QList<CommSample>& benchmark;     ///< the collectives as training meets them where so timed
    const QStringList& benchmarkSources;
    const PlanOptions& options;
    int barrierLeftOut = 0;
    ComputeModel compute;                    ///< fitCompute
    double gradientBytes = 0;                ///< layoutStrategies
    QStringList strategies;                  ///< layoutStrategies
    int rpn = 1;                             ///< fitCollectives: ranks per node predicted
    bool needComm = false;                   ///< fitCollectives: some point has more than one rank
    int measuredMax = 1;                     ///< chooseBase
    const PlanRunInput* base = nullptr;      ///< chooseBase
    double sigmaCompute = 0, sigmaComm = 0;  ///< bandWidths
    double sigmaLoss = 0, startupS = 0;      ///< fitCurve
    /// Every timing as makePlan got it (the refits of planuncertainty.cpp start from these).
    const QList<CommSample>* timings = nullptr;
    /// The bootstrap's σ of ln(epoch) per (strategy, nodes): bootstrapParameters.
    QMap<QPair<QString, int>, double> sigmaParameters;
};

/// The model-form σ assumed where no size of the runs could be held out and predicted: the root
/// mean square log error (0.094, rounded up) of the 27 1→2-rank predictions that the planner makes
/// from the measurements of six workspaces whose calibrations timed the config's own step on its
/// loader's batches (docs/planner.md, "The assumed model form"; tests/bench/planner/sigma_prior.py).
inline constexpr double kAssumedModelSigma = 0.10;
/// How many held-out predictions the assumed σ counts as where the runs' own held-out sizes measure
/// one: σ² = (Σ e² + ν₀·kAssumedModelSigma²) / (k + ν₀) over their k log errors e, the variance of a
/// normal model with a scaled-inverse-χ² prior of ν₀ degrees of freedom. One held-out size of two
/// strategies (k = 2) cannot say that the model is better than on the 27 predictions behind the
/// assumption: coverage run E's ±12 % range from errors of +2.9 % and +1.1 % missed at −13.1 %.
inline constexpr double kModelSigmaPriorWeight = 2;
/// z of PlanPoint's range: the standard normal quantile of (1 + kPlanRangeCoverage) / 2.
double rangeZ();

Status fitComputePart(PlanFit& f);
void describeArrivalWait(PlanFit& f);
Status layoutStrategies(PlanFit& f);
Status fitCollectives(PlanFit& f);
void checkSizesSent(PlanFit& f);
void chooseBase(PlanFit& f);
void bandWidths(PlanFit& f);
Status fitCurve(PlanFit& f);
/// The validation losses of the runs' epochs, run by run; the runs that gave any go to `from`.
QList<RunLosses> validationLosses(const std::vector<PlanRunInput>& runs, QStringList* from);

/// Leave one size out: each (ranks, nodes) the runs measured beyond the base's, left out of the
/// runs and predicted from the rest, per strategy there; the plan's modelSigma from their errors.
void crossValidate(PlanFit& f);
/// The bootstrap over repeated measurements (the runs of a strategy at a layout, the timings of a
/// collective at a size): the spread of each point's prediction over refits of resampled inputs.
void bootstrapParameters(PlanFit& f);
/// The plan's words for what its ranges hold.
void describeRanges(PlanFit& f);
/// PlanPoint::extrapolationWeight of a point of strategy `s` at `ranks` on `nodes`, `localBatch` per rank.
double extrapolationWeight(const PlanFit& f, const QString& s, int ranks, int nodes, double localBatch);

/// Whether a run scaled better than linearly: its throughput per rank above the base run's.
bool measuredSuperlinear(const std::vector<PlanRunInput>& used, const PlanRunInput& base);
PlanPoint predictPoint(const PlanFit& f, const QString& s, int nodes, bool superlinear);
/// PlanPoint::outsideModel of a predicted point (its extrapolation weight and ranks set).
QStringList outsideTheModel(const PlanFit& f, const PlanPoint& p);
void planWarnings(PlanFit& f);

}  // namespace scaledesk::planparts
