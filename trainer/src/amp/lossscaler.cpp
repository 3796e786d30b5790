#include "amp/lossscaler.h"

#include <stdexcept>
#include <string>

namespace scaledesk::train {

LossScaler::LossScaler(Options options) : m_options(options), m_scale(options.initScale)
{
    if (!(options.initScale > 0) || !(options.growthFactor > 1) || !(options.backoffFactor > 0 && options.backoffFactor < 1) ||
        options.growthInterval < 1)
        throw std::invalid_argument("loss scaler: init scale > 0, growth factor > 1, 0 < back-off < 1 and growth interval >= 1");
}

bool LossScaler::update(bool foundNonFinite)
{
    if (foundNonFinite) {
        m_scale *= m_options.backoffFactor;
        m_tracker = 0;
        ++m_skipped;
        return false;
    }
    if (++m_tracker == m_options.growthInterval) {
        m_scale *= m_options.growthFactor;
        m_tracker = 0;
    }
    return true;
}

void LossScaler::restore(double scale, int64_t growthTracker)
{
    if (!(scale > 0) || growthTracker < 0 || growthTracker >= m_options.growthInterval)
        throw std::invalid_argument("loss scaler: a saved scale must be > 0 and its growth tracker in 0.." +
                                    std::to_string(m_options.growthInterval - 1));
    m_scale = scale;
    m_tracker = growthTracker;
}

}  // namespace scaledesk::train
