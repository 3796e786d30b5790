#include "run/bf16check.h"

#include "amp/autocast.h"
#include "model/unet.h"

#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace scaledesk::train {

namespace {
// Every parameter's gradient after one forward and backward of `input`, in `mode`.
std::map<std::string, torch::Tensor> gradients(UNet& model, const torch::Tensor& input, const torch::Tensor& target, double lambdaRho,
                                               AmpMode mode)
{
    model->zero_grad();
    torch::Tensor loss;
    {
        AutocastGuard autocast(mode, c10::DeviceType::CPU);
        loss = computeLoss(model->forward(input).to(torch::kFloat), target, lambdaRho);
    }
    loss.backward();
    std::map<std::string, torch::Tensor> out;
    for (const auto& p : model->named_parameters())
        if (p.value().grad().defined()) out[p.key()] = p.value().grad().clone();
    return out;
}
}  // namespace

Bf16Check bf16GradientCheck(const TrainConfig& c)
{
    // Its own generator state: the run's seed sets the model and data later, as without the check.
    torch::manual_seed(0x5eedb16);
    const UNetOptions options = unetOptions(c);
    UNet model(options);
    model->initWeights(c.convScale, c.convBias);
    const int64_t side = c.dataSize;
    const torch::Tensor input = torch::rand({1, options.inChannels, side, side, side}) * 2 - 1;
    const torch::Tensor target = torch::rand({1, options.outChannels, side, side, side}) * 2 - 1;
    const auto fp32 = gradients(model, input, target, c.lambdaRho, AmpMode::None);
    auto bf16 = gradients(model, input, target, c.lambdaRho, AmpMode::Bf16);
    // Test-only fault injection (docs/trainer.md): SCALEDESK_FAULT_BF16_GRADIENT=FACTOR scales the
    // bf16 gradient of the last parameter, as a wrong kernel would, so the refusal is tested on any CPU.
    if (const char* fault = std::getenv("SCALEDESK_FAULT_BF16_GRADIENT"); fault && !bf16.empty())
        bf16.rbegin()->second.mul_(std::atof(fault));
    Bf16Check out;
    for (const auto& [name, g32] : fp32) {
        const auto it = bf16.find(name);
        const double norm = g32.norm().item<double>();
        if (it == bf16.end() || norm == 0.0) continue;
        double rel = (it->second - g32).norm().item<double>() / norm;
        if (!std::isfinite(rel)) rel = INFINITY;
        if (rel > out.worst) out.worst = rel, out.worstParameter = name;
    }
    if (out.worst <= kBf16GradientTolerance) return out;
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.0f %%", out.worst * 100.0);
    out.refusal = "this CPU's bf16 kernels compute the model's gradients wrong: a check before training (one sample of " +
        std::to_string(side) + "^3, fp32 against bf16 autocast) found " + out.worstParameter + "'s gradient " +
        (std::isfinite(out.worst) ? std::string(pct) + " away from fp32's" : std::string("NaN or inf")) +
        " (bf16 rounding alone moves a freshly initialised model's smallest gradients by up to about 20 %; docs/trainer.md, "
        "\"Mixed precision\"): train in fp32 on this machine";
    return out;
}

}  // namespace scaledesk::train
