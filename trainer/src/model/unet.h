#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>

#include <cstdint>
#include <string>
#include <vector>

namespace scaledesk::train {

struct TrainConfig;

/// Shape parameters of the NERSC U-Net (spec §1) plus the ScaleDesk size extensions.
struct UNetOptions {
    int64_t inChannels = 4;
    int64_t outChannels = 5;
    int64_t baseChannels = 64;  ///< 64 reproduces the original
    bool fullScale = true;      ///< 6 levels; false drops conv_down6/conv_up6 (5 levels)
};

/// The U-Net a config trains: its output channels, base channels and depth, 4 input channels.
UNetOptions unetOptions(const TrainConfig& config);

/// One row of the layer table, for `--describe` and tests.
struct LayerInfo {
    std::string name;
    std::string kind;
    int64_t inChannels;
    int64_t outChannels;
    int64_t spatialIn;
    int64_t spatialOut;
    int64_t parameters;
};

/// The cosmology 3D U-Net: kernel 4, stride 2, padding 1 everywhere; LeakyReLU(0.01) down,
/// ReLU up, skip concat order [upsampled, encoder], tanh on the output, no normalisation.
class UNetImpl : public torch::nn::Module {
public:
    explicit UNetImpl(const UNetOptions& options);

    torch::Tensor forward(const torch::Tensor& input);

    /// N(0, scale) weights and constant biases on every conv and transposed conv (spec §1.3).
    void initWeights(double scale, double bias);

    int64_t parameterCount() const;
    /// The layer table for a cubic input of side `spatial`.
    std::vector<LayerInfo> layerTable(int64_t spatial) const;
    const UNetOptions& options() const { return m_options; }

private:
    UNetOptions m_options;
    std::vector<torch::nn::Conv3d> m_down;         // conv_down1 … conv_downL
    std::vector<torch::nn::ConvTranspose3d> m_up;  // conv_upL … conv_up2 (deepest first)
    torch::nn::ConvTranspose3d m_last{nullptr};
};
TORCH_MODULE(UNet);

/// The training loss of the U-Net's output: L1 against the target, plus lambda_rho times the L1 of
/// the densities exp(14·x) of channel 0 when lambdaRho > 0 (the original's density term).
torch::Tensor computeLoss(const torch::Tensor& output, const torch::Tensor& target, double lambdaRho);

}  // namespace scaledesk::train
