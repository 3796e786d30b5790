#include "model/unet.h"

#include <torch/torch.h>

#include <gtest/gtest.h>

using namespace scaledesk::train;

TEST(UNet, BaseConfigHasTheOriginalParameterCount)
{
    UNet model(UNetOptions{4, 5, 64, true});
    EXPECT_EQ(model->parameterCount(), 116977029);
    // The per-layer counts of spec §1.2.
    const std::vector<std::pair<std::string, int64_t>> expected = {
        {"conv_down1", 16448},    {"conv_down2", 524416},   {"conv_down3", 2097408}, {"conv_down4", 8389120},
        {"conv_down5", 16777728}, {"conv_down6", 16777728}, {"conv_up6", 16777728},  {"conv_up5", 33554944},
        {"conv_up4", 16777472},   {"conv_up3", 4194432},    {"conv_up2", 1048640},   {"conv_last", 40965}};
    const auto table = model->layerTable(64);
    ASSERT_EQ(table.size(), expected.size());
    for (std::size_t i = 0; i < table.size(); ++i) {
        EXPECT_EQ(table[i].name, expected[i].first);
        EXPECT_EQ(table[i].parameters, expected[i].second) << table[i].name;
    }
    // Transposed-conv weights are stored input-channel first: [in, out, 4, 4, 4].
    const auto named = model->named_parameters();
    ASSERT_TRUE(named.contains("conv_up5.weight"));
    ASSERT_TRUE(named.contains("conv_down1.weight"));
    EXPECT_EQ(named["conv_up5.weight"].sizes(), (std::vector<int64_t>{1024, 512, 4, 4, 4}));
    EXPECT_EQ(named["conv_down1.weight"].sizes(), (std::vector<int64_t>{64, 4, 4, 4, 4}));
}

// Runs the real forward with hooks-by-hand: every layer's output shape for a 64³ input
// (base_channels 8 keeps it fast; the channel pattern is the base one divided by 8).
TEST(UNet, LayerOutputShapes)
{
    torch::NoGradGuard noGrad;
    UNet model(UNetOptions{4, 5, 8, true});
    const auto table = model->layerTable(64);
    const std::vector<int64_t> spatial = {32, 16, 8, 4, 2, 1, 2, 4, 8, 16, 32, 64};
    const std::vector<int64_t> channels = {8, 16, 32, 64, 64, 64, 64, 64, 32, 16, 8, 5};
    ASSERT_EQ(table.size(), spatial.size());
    for (std::size_t i = 0; i < table.size(); ++i) {
        EXPECT_EQ(table[i].spatialOut, spatial[i]) << table[i].name;
        EXPECT_EQ(table[i].outChannels, channels[i]) << table[i].name;
    }
    // Concat inputs: upsampled + skip of equal channel count.
    EXPECT_EQ(table[7].inChannels, 128);  // conv_up5 takes 64 + 64
    EXPECT_EQ(table[11].inChannels, 16);  // conv_last takes 8 + 8
    const auto out = model->forward(torch::rand({2, 4, 64, 64, 64}) * 2 - 1);
    EXPECT_EQ(out.sizes(), (std::vector<int64_t>{2, 5, 64, 64, 64}));
    EXPECT_LE(out.abs().max().item<float>(), 1.0f);  // tanh
}

TEST(UNet, FiveLevelVariantDropsTheBottomLevel)
{
    torch::NoGradGuard noGrad;
    UNet model(UNetOptions{4, 5, 4, false});
    const auto table = model->layerTable(32);
    ASSERT_EQ(table.size(), 10u);
    EXPECT_EQ(table[4].name, "conv_down5");
    EXPECT_EQ(table[5].name, "conv_up5");
    EXPECT_EQ(table[5].inChannels, 32);  // 8·c → 8·c without a concat at the bottom
    EXPECT_EQ(table[5].outChannels, 32);
    const auto out = model->forward(torch::zeros({1, 4, 32, 32, 32}));
    EXPECT_EQ(out.sizes(), (std::vector<int64_t>{1, 5, 32, 32, 32}));
}

TEST(UNet, InitIsNormalWithZeroBias)
{
    torch::manual_seed(0);
    UNet model(UNetOptions{4, 5, 16, true});
    model->initWeights(0.02, 0.0);
    for (const auto& p : model->named_parameters()) {
        if (p.key().find("bias") != std::string::npos) {
            EXPECT_EQ(p.value().abs().max().item<float>(), 0.0f) << p.key();
        } else if (p.value().numel() > 10000) {
            EXPECT_NEAR(p.value().mean().item<double>(), 0.0, 0.002) << p.key();
            EXPECT_NEAR(p.value().std().item<double>(), 0.02, 0.001) << p.key();
        }
    }
    // Output close to 0 at init (input mean |x| = 0.5), so the initial L1 loss is about mean|target|.
    torch::NoGradGuard noGrad;
    const auto out = model->forward(torch::rand({1, 4, 64, 64, 64}) * 2 - 1);
    EXPECT_LT(out.abs().mean().item<double>(), 0.05);
}

#include "compat/torchcompat.h"
#include "model/fusedadam.h"

// The fused step follows torch::optim::Adam over many steps (float rounding order aside), with
// state kept in the optimizer where checkpoints find it.
TEST(FusedAdam, MatchesLibtorchAdam)
{
    torch::manual_seed(3);
    const auto init = torch::randn({3000});
    auto a = init.clone().set_requires_grad(true), b = init.clone().set_requires_grad(true);
    torch::optim::Adam reference({a}, torch::optim::AdamOptions(1e-2));
    torch::optim::Adam fused({b}, torch::optim::AdamOptions(1e-2));
    for (int step = 1; step <= 50; ++step) {
        const auto target = torch::randn({3000});
        for (auto* t : {&a, &b}) {
            if (t->grad().defined()) t->grad().zero_();
            ((*t - target).pow(2) * (1.0 + step % 3)).sum().backward();
        }
        static_cast<torch::optim::AdamOptions&>(reference.param_groups()[0].options()).lr(1e-2 / step);
        static_cast<torch::optim::AdamOptions&>(fused.param_groups()[0].options()).lr(1e-2 / step);
        reference.step();
        scaledesk::train::fusedAdamStep(fused);
    }
    EXPECT_TRUE(torch::allclose(a, b, 1e-5, 1e-6)) << (a - b).abs().max().item<float>();
    EXPECT_FALSE(torch::equal(a, init));
    auto& state = static_cast<torch::optim::AdamParamState&>(*fused.state().at(scaledesk::train::compat::optimizerStateKey(b)));
    EXPECT_EQ(state.step(), 50);
    auto& refState = static_cast<torch::optim::AdamParamState&>(*reference.state().at(scaledesk::train::compat::optimizerStateKey(a)));
    EXPECT_TRUE(torch::allclose(state.exp_avg_sq(), refState.exp_avg_sq(), 1e-5, 1e-7));
}
