#pragma once

#include "amp/ampmode.h"
#include "data/dataset.h"
#include "model/unet.h"

#include <memory>

namespace scaledesk::train {

class Communicator;

/// The mean loss of `model` over one pass of a loader, as the NERSC validation computes it: eval
/// mode, no gradients, autocast in `amp`, each batch's loss averaged over ranks first. A collective.
double evaluate(UNet& model, const std::shared_ptr<VolumeSource>& source, const LoaderPlan& plan, const c10::Device& device, AmpMode amp,
                Communicator& comm, double lambdaRho);

}  // namespace scaledesk::train
