#include "model/unet.h"

#include "run/config.h"

#include <torch/torch.h>

namespace scaledesk::train {

namespace {
torch::nn::Conv3dOptions downOptions(int64_t in, int64_t out)
{
    return torch::nn::Conv3dOptions(in, out, 4).stride(2).padding(1).bias(true);
}
torch::nn::ConvTranspose3dOptions upOptions(int64_t in, int64_t out)
{
    return torch::nn::ConvTranspose3dOptions(in, out, 4).stride(2).padding(1).output_padding(0).bias(true);
}
}  // namespace

UNetOptions unetOptions(const TrainConfig& config) { return UNetOptions{4, config.outChannels, config.baseChannels, config.fullScale}; }

UNetImpl::UNetImpl(const UNetOptions& options) : m_options(options)
{
    const int64_t c = options.baseChannels;
    const int levels = options.fullScale ? 6 : 5;
    const std::vector<int64_t> downOut = {c, 2 * c, 4 * c, 8 * c, 8 * c, 8 * c};
    int64_t in = options.inChannels;
    for (int i = 0; i < levels; ++i) {
        m_down.push_back(register_module("conv_down" + std::to_string(i + 1), torch::nn::Conv3d(downOptions(in, downOut[i]))));
        in = downOut[i];
    }
    // Decoder level k (levels … 2) produces downOut[k-2] channels; its input is the level below,
    // concatenated with that level's encoder output except at the very bottom.
    for (int k = levels; k >= 2; --k) {
        const int64_t upIn = (k == levels) ? downOut[k - 1] : downOut[k - 1] + downOut[k - 1];
        m_up.push_back(register_module("conv_up" + std::to_string(k), torch::nn::ConvTranspose3d(upOptions(upIn, downOut[k - 2]))));
    }
    m_last = register_module("conv_last", torch::nn::ConvTranspose3d(upOptions(2 * c, options.outChannels)));
}

torch::Tensor UNetImpl::forward(const torch::Tensor& input)
{
    std::vector<torch::Tensor> skips;
    skips.reserve(m_down.size());
    torch::Tensor x = input;
    for (auto& down : m_down) {
        x = down->forward(x);
        torch::leaky_relu_(x, 0.01);
        skips.push_back(x);
    }
    const std::size_t levels = m_down.size();
    for (std::size_t i = 0; i < m_up.size(); ++i) {
        x = m_up[i]->forward(x);
        torch::relu_(x);
        x = torch::cat({x, skips[levels - 2 - i]}, 1);
    }
    return torch::tanh(m_last->forward(x));
}

void UNetImpl::initWeights(double scale, double bias)
{
    torch::NoGradGuard noGrad;
    auto init = [&](torch::Tensor& w, torch::Tensor& b) {
        w.normal_(0.0, scale);
        b.fill_(bias);
    };
    for (auto& d : m_down) init(d->weight, d->bias);
    for (auto& u : m_up) init(u->weight, u->bias);
    init(m_last->weight, m_last->bias);
}

int64_t UNetImpl::parameterCount() const
{
    int64_t n = 0;
    for (const auto& p : parameters()) n += p.numel();
    return n;
}

std::vector<LayerInfo> UNetImpl::layerTable(int64_t spatial) const
{
    std::vector<LayerInfo> rows;
    auto count = [](const torch::nn::Module& m) {
        int64_t n = 0;
        for (const auto& p : m.parameters()) n += p.numel();
        return n;
    };
    int64_t s = spatial;
    for (std::size_t i = 0; i < m_down.size(); ++i) {
        const auto& o = m_down[i]->options;
        rows.push_back(
            {"conv_down" + std::to_string(i + 1), "Conv3d + LeakyReLU", o.in_channels(), o.out_channels(), s, s / 2, count(*m_down[i])});
        s /= 2;
    }
    for (std::size_t i = 0; i < m_up.size(); ++i) {
        const auto& o = m_up[i]->options;
        rows.push_back({"conv_up" + std::to_string(m_down.size() - i), "ConvT3d + ReLU", o.in_channels(), o.out_channels(), s, s * 2,
                        count(*m_up[i])});
        s *= 2;
    }
    const auto& o = m_last->options;
    rows.push_back({"conv_last", "ConvT3d + tanh", o.in_channels(), o.out_channels(), s, s * 2, count(*m_last)});
    return rows;
}

torch::Tensor computeLoss(const torch::Tensor& output, const torch::Tensor& target, double lambdaRho)
{
    torch::Tensor loss = torch::l1_loss(output, target);
    if (lambdaRho > 0.0) {
        // The original's density term: L1 between exp(14·x) of channel 0 ("log(ρ)/14" undone).
        loss = loss + lambdaRho * torch::l1_loss(torch::exp(output.select(1, 0).mul(14.0)), torch::exp(target.select(1, 0).mul(14.0)));
    }
    return loss;
}

}  // namespace scaledesk::train
