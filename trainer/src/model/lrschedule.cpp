#include "model/lrschedule.h"

#include <cmath>

namespace scaledesk::train {

bool parseLrScaling(const std::string& text, LrScaling& out)
{
    if (text == "none")
        out = LrScaling::None;
    else if (text == "linear")
        out = LrScaling::Linear;
    else if (text == "sqrt")
        out = LrScaling::Sqrt;
    else
        return false;
    return true;
}

const char* lrScalingName(LrScaling scaling)
{
    switch (scaling) {
    case LrScaling::None: return "none";
    case LrScaling::Linear: return "linear";
    case LrScaling::Sqrt: return "sqrt";
    }
    return "?";
}

double LrSchedule::initLr() const
{
    const double ratio = double(globalBatch) / double(baseBatch);
    switch (scaling) {
    case LrScaling::None: return startLr;
    case LrScaling::Linear: return ratio * startLr;
    case LrScaling::Sqrt: return std::sqrt(ratio) * startLr;
    }
    return startLr;
}

double LrSchedule::at(int64_t iternum) const
{
    const double init = initLr();
    const double pi = std::acos(-1.0);
    if (globalBatch > baseBatch && scaling != LrScaling::None) {
        // warmup_steps 0: no warm-up, the cosine starts at init_lr (as in the original, whose
        // `iternum < warmup_steps` is then never true).
        if (warmupSteps > 0 && iternum < warmupSteps) return double(iternum) / double(warmupSteps) * init;
        // The original divides by tot_steps, not tot_steps - warmup: the LR never reaches end_lr.
        return endLr + 0.5 * (init - endLr) * (1.0 + std::cos(pi * double(iternum - warmupSteps) / double(totSteps)));
    }
    return endLr + 0.5 * (init - endLr) * (1.0 + std::cos(pi * double(iternum) / double(totSteps)));
}

}  // namespace scaledesk::train
