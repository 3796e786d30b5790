#include "dist/gradnoise.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace scaledesk::train {

GradientNoise estimateGradientNoise(double smallSq, double bigSq, double bSmall, double bBig)
{
    if (!(bSmall > 0) || !(bBig > bSmall)) throw std::invalid_argument("gradient noise: needs 0 < B_small < B_big");
    GradientNoise n;
    n.gradSq = (bBig * bigSq - bSmall * smallSq) / (bBig - bSmall);
    n.traceSigma = (smallSq - bigSq) / (1.0 / bSmall - 1.0 / bBig);
    n.bSimple = n.gradSq > 0 ? n.traceSigma / n.gradSq : std::numeric_limits<double>::quiet_NaN();
    return n;
}

}  // namespace scaledesk::train
