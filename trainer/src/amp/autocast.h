#pragma once

#include "amp/ampmode.h"

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

namespace scaledesk::train {

/// The autocast dtype of a mode (Float for none).
c10::ScalarType ampDtype(AmpMode mode);

/// Mirrors Python's `with torch.autocast(device_type, dtype)`: the device type's autocast state is
/// thread-local; the guard sets it and restores what was there. Mode none changes nothing.
class AutocastGuard {
public:
    AutocastGuard(AmpMode mode, c10::DeviceType device);
    ~AutocastGuard();
    AutocastGuard(const AutocastGuard&) = delete;
    AutocastGuard& operator=(const AutocastGuard&) = delete;

private:
    bool m_active;
    c10::DeviceType m_device;
    bool m_prevEnabled = false;
    c10::ScalarType m_prevDtype = c10::ScalarType::Float;
};

}  // namespace scaledesk::train
