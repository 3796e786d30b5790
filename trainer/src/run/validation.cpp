#include "run/validation.h"

#include "amp/autocast.h"
#include "dist/smallcollectives.h"

#include <torch/torch.h>

#include <cmath>

namespace scaledesk::train {

double evaluate(UNet& model, const std::shared_ptr<VolumeSource>& source, const LoaderPlan& plan, const c10::Device& device, AmpMode amp,
                Communicator& comm, double lambdaRho)
{
    // The loader's buffers are filled by worker threads outside inference mode: create them first.
    BatchLoader loader(source, plan);
    double sum = 0.0;
    int64_t count = 0;
    {
        c10::InferenceMode inference;
        model->eval();
        while (auto batch = loader.next()) {
            AutocastGuard autocast(amp, device.type());
            const torch::Tensor out = model->forward(batch->input.to(device));
            const double local = computeLoss(out.to(torch::kFloat), batch->target.to(device), lambdaRho).item<double>();
            sum += allreduceMean(comm, local);
            ++count;
        }
    }
    model->train();
    return count ? sum / double(count) : std::nan("");
}

}  // namespace scaledesk::train
