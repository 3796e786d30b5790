#pragma once

#include "core/expected.h"

namespace scaledesk {

/// A tag type for operations that return nothing but may fail.
struct Done {};
using Status = Expected<Done>;

}  // namespace scaledesk
