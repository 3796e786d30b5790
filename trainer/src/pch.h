// Precompiled for every trainer translation unit: libtorch's headers cost ~15 s each otherwise.
#pragma once
#include <torch/torch.h>
