#include "amp/autocast.h"

#include "compat/torchcompat.h"

namespace scaledesk::train {

c10::ScalarType ampDtype(AmpMode mode)
{
    switch (mode) {
    case AmpMode::Fp16: return c10::ScalarType::Half;
    case AmpMode::Bf16: return c10::ScalarType::BFloat16;
    case AmpMode::None: break;
    }
    return c10::ScalarType::Float;
}

AutocastGuard::AutocastGuard(AmpMode mode, c10::DeviceType device) : m_active(mode != AmpMode::None), m_device(device)
{
    if (!m_active) return;
    m_prevEnabled = compat::autocastEnabled(device);
    m_prevDtype = compat::autocastDtype(device);
    compat::setAutocastEnabled(device, true);
    compat::setAutocastDtype(device, ampDtype(mode));
    at::autocast::increment_nesting();
}

AutocastGuard::~AutocastGuard()
{
    if (!m_active) return;
    // The weight casts cached inside the region are dropped when the outermost region ends.
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    compat::setAutocastEnabled(m_device, m_prevEnabled);
    compat::setAutocastDtype(m_device, m_prevDtype);
}

}  // namespace scaledesk::train
