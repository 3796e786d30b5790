// The fp16 loss scaler's state machine (GradScaler's defaults), the unscale-and-check of gradients,
// and MixedPrecision over a real strategy: a step with an inf gradient is skipped, parameters and
// Adam state untouched, and the scale backs off.
#include "amp/ampmode.h"
#include "amp/autocast.h"
#include "amp/lossscaler.h"
#include "amp/mixedprecision.h"
#include "compat/torchcompat.h"
#include "device/stepclock.h"
#include "dist/comm.h"
#include "dist/gradsync.h"
#include "model/unet.h"

#include <torch/torch.h>

#include <gtest/gtest.h>

#include <limits>

using namespace scaledesk::train;

TEST(LossScaler, StartsAtTwoToTheSixteenAndGrowsAfterTwoThousandCleanSteps)
{
    LossScaler s;
    EXPECT_EQ(s.scale(), 65536.0);
    for (int i = 1; i < 2000; ++i) {
        ASSERT_TRUE(s.update(false));
        ASSERT_EQ(s.scale(), 65536.0) << "grew early, at clean step " << i;
    }
    EXPECT_EQ(s.growthTracker(), 1999);
    EXPECT_TRUE(s.update(false));  // the 2000th clean step
    EXPECT_EQ(s.scale(), 131072.0);
    EXPECT_EQ(s.growthTracker(), 0);
    EXPECT_EQ(s.skippedSteps(), 0);
}

TEST(LossScaler, AnInfSkipsTheStepHalvesTheScaleAndRestartsTheCount)
{
    LossScaler s;
    for (int i = 0; i < 1500; ++i) s.update(false);
    EXPECT_FALSE(s.update(true));
    EXPECT_EQ(s.scale(), 32768.0);
    EXPECT_EQ(s.growthTracker(), 0);
    EXPECT_EQ(s.skippedSteps(), 1);
    EXPECT_FALSE(s.update(true));  // backs off again at once
    EXPECT_EQ(s.scale(), 16384.0);
    // Growth needs 2000 clean steps counted from the last back-off, not from the start.
    for (int i = 0; i < 1999; ++i) s.update(false);
    EXPECT_EQ(s.scale(), 16384.0);
    s.update(false);
    EXPECT_EQ(s.scale(), 32768.0);
}

TEST(LossScaler, RestoresASavedStateAndRefusesANonsensicalOne)
{
    LossScaler s;
    s.restore(1024.0, 1999);
    EXPECT_EQ(s.scale(), 1024.0);
    s.update(false);
    EXPECT_EQ(s.scale(), 2048.0);
    EXPECT_THROW(s.restore(0.0, 0), std::invalid_argument);
    EXPECT_THROW(s.restore(8.0, 2000), std::invalid_argument);
    EXPECT_THROW(s.restore(8.0, -1), std::invalid_argument);
    EXPECT_THROW(LossScaler(LossScaler::Options{65536.0, 1.0, 0.5, 2000}), std::invalid_argument);
}

TEST(AmpMode, NamesParseBothWays)
{
    for (AmpMode m : {AmpMode::None, AmpMode::Fp16, AmpMode::Bf16}) {
        AmpMode back = AmpMode::None;
        ASSERT_TRUE(parseAmpMode(ampModeName(m), back));
        EXPECT_EQ(back, m);
    }
    AmpMode out = AmpMode::Bf16;
    EXPECT_FALSE(parseAmpMode("fp8", out));
    EXPECT_FALSE(parseAmpMode("BF16", out));
    EXPECT_EQ(out, AmpMode::Bf16);
    EXPECT_EQ(ampDtype(AmpMode::Fp16), c10::ScalarType::Half);
    EXPECT_EQ(ampDtype(AmpMode::Bf16), c10::ScalarType::BFloat16);
    EXPECT_EQ(ampDtype(AmpMode::None), c10::ScalarType::Float);
}

TEST(AmpMode, TheAutocastGuardSetsTheDtypeAndRestoresTheOldState)
{
    ASSERT_FALSE(compat::autocastEnabled(c10::DeviceType::CPU));
    {
        AutocastGuard guard(AmpMode::Bf16, c10::DeviceType::CPU);
        EXPECT_TRUE(compat::autocastEnabled(c10::DeviceType::CPU));
        EXPECT_EQ(compat::autocastDtype(c10::DeviceType::CPU), at::kBFloat16);
        auto conv = torch::nn::Conv3d(torch::nn::Conv3dOptions(2, 2, 3));
        EXPECT_EQ(conv->forward(torch::randn({1, 2, 4, 4, 4})).scalar_type(), at::kBFloat16);
        {
            AutocastGuard none(AmpMode::None, c10::DeviceType::CPU);  // changes nothing
            EXPECT_TRUE(compat::autocastEnabled(c10::DeviceType::CPU));
        }
    }
    EXPECT_FALSE(compat::autocastEnabled(c10::DeviceType::CPU));
}

TEST(Unscale, DividesByTheScaleAndFlagsInfAndNaN)
{
    std::vector<torch::Tensor> grads = {torch::full({5}, 8.0), torch::full({3}, -4.0)};
    EXPECT_EQ(unscaleAndFindNonFinite(grads, 4.0).item<float>(), 0.0f);
    EXPECT_TRUE(torch::equal(grads[0], torch::full({5}, 2.0)));
    EXPECT_TRUE(torch::equal(grads[1], torch::full({3}, -1.0)));
    for (float bad : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), std::nanf("")}) {
        std::vector<torch::Tensor> g = {torch::ones({4}), torch::ones({4})};
        g[1][2] = bad;
        EXPECT_GT(unscaleAndFindNonFinite(g, 2.0).item<float>(), 0.0f) << bad;
    }
}

namespace {

// A small U-Net on one rank with the real strategy ("none": libtorch's gradients, fused Adam).
struct OneRank {
    OneRank()
        : comm(makeCommunicator(availableBackends().at(0), DistEnv{}, std::chrono::seconds(5), c10::Device(c10::DeviceType::CPU))),
          clock(makeHostClock())
    {
        torch::manual_seed(3);
        model = UNet(UNetOptions{4, 5, 2, false});
        adam = std::make_unique<torch::optim::Adam>(model->parameters(), torch::optim::AdamOptions(1e-3));
        sync = makeGradientSync("none", *comm, model, *adam, *clock, 25, 64, 25);
        input = torch::randn({2, 4, 32, 32, 32});
        target = torch::randn({2, 5, 32, 32, 32}).tanh();
    }
    // Forward, scaled backward, and the scaler's decision; the update when it says so.
    bool step(MixedPrecision& amp, bool poison)
    {
        sync->zeroGrad();
        torch::Tensor loss = computeLoss(model->forward(input), target, 0.0);
        amp.scaleLoss(loss).backward();
        sync->afterBackward();
        if (poison) sync->gradients().front().view(-1)[0] = std::numeric_limits<float>::infinity();
        const bool take = amp.unscaleAndUpdate(sync->gradients(), nullptr);
        if (take) sync->step(1e-3);
        clock->reset();
        return take;
    }
    std::vector<torch::Tensor> snapshot() const
    {
        std::vector<torch::Tensor> out;
        for (const auto& p : model->parameters()) out.push_back(p.detach().clone());
        return out;
    }
    std::unique_ptr<Communicator> comm;
    std::unique_ptr<StepClock> clock;
    UNet model{nullptr};
    std::unique_ptr<torch::optim::Adam> adam;
    std::unique_ptr<GradientSync> sync;
    torch::Tensor input, target;
};

bool same(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b)
{
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!torch::equal(a[i], b[i])) return false;
    return true;
}

}  // namespace

TEST(MixedPrecision, Fp16UnscalesToTheUnscaledGradientsAndSkipsAStepWithAnInf)
{
    OneRank scaled, plain;
    MixedPrecision fp16(AmpMode::Fp16, c10::DeviceType::CPU), none(AmpMode::None, c10::DeviceType::CPU);
    ASSERT_TRUE(scaled.step(fp16, false));
    ASSERT_TRUE(plain.step(none, false));
    // The scale is a power of two: unscaled gradients, and so the updates, equal the fp32 ones.
    EXPECT_TRUE(same(scaled.snapshot(), plain.snapshot()));
    EXPECT_EQ(fp16.scaler().scale(), 65536.0);

    const auto before = scaled.snapshot();
    EXPECT_FALSE(scaled.step(fp16, true));
    EXPECT_TRUE(same(scaled.snapshot(), before)) << "a skipped step changed the parameters";
    EXPECT_EQ(fp16.scaler().scale(), 32768.0);
    EXPECT_EQ(fp16.scaler().skippedSteps(), 1);
    // Adam's step count did not move either: the next clean step is its second.
    EXPECT_TRUE(scaled.step(fp16, false));
    const auto& state =
        static_cast<torch::optim::AdamParamState&>(*scaled.adam->state().at(compat::optimizerStateKey(scaled.model->parameters()[0])));
    EXPECT_EQ(state.step(), 2);
}

TEST(MixedPrecision, OtherModesNeverSkipNorTouchTheGradients)
{
    std::vector<torch::Tensor> grads = {torch::full({3}, std::numeric_limits<float>::infinity())};
    for (AmpMode m : {AmpMode::None, AmpMode::Bf16}) {
        MixedPrecision amp(m, c10::DeviceType::CPU);
        EXPECT_TRUE(amp.unscaleAndUpdate(grads, nullptr));
        EXPECT_TRUE(torch::isinf(grads[0]).all().item<bool>());
        const auto loss = torch::full({1}, 2.0);
        EXPECT_TRUE(torch::equal(amp.scaleLoss(loss), loss));
    }
}
