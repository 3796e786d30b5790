// The gradient noise scale estimator (dist/gradnoise.h) against the closed form of a synthetic
// quadratic problem with known gradient noise: loss_i(θ) = ½|θ − x_i|² with x_i ~ N(μ, diag(σ²)).
// A sample's gradient is θ − x_i, so the true gradient is G = θ − μ and the per-sample covariance
// Σ = diag(σ²): B_simple = Σσ² / |θ − μ|². The batch gradients are taken by autograd, as in
// training: each of n "ranks" a batch of B_local samples (its gradient before the average), and
// their mean (the averaged gradient, a batch of n·B_local).
#include "dist/gradnoise.h"

#include <torch/torch.h>

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

using scaledesk::train::estimateGradientNoise;
using scaledesk::train::GradientNoise;

namespace {

struct Problem {
    torch::Tensor theta, mu, sigma;
    double gradSq() const { return (theta - mu).pow(2).sum().item<double>(); }
    double traceSigma() const { return sigma.pow(2).sum().item<double>(); }
};

// The two squared norms averaged over `steps` steps, as the trainer averages them over an epoch
// (the local one over the ranks too).
std::pair<double, double> measure(const Problem& p, int ranks, int64_t local, int steps, uint64_t seed)
{
    torch::manual_seed(seed);
    const int64_t d = p.theta.numel();
    double smallSq = 0, bigSq = 0;
    for (int s = 0; s < steps; ++s) {
        torch::Tensor sum = torch::zeros({d}, torch::kDouble);
        for (int r = 0; r < ranks; ++r) {
            torch::Tensor theta = p.theta.clone().requires_grad_(true);
            const torch::Tensor x = p.mu + p.sigma * torch::randn({local, d}, torch::kDouble);
            (0.5 * (theta - x).pow(2).sum(1)).mean().backward();
            smallSq += theta.grad().dot(theta.grad()).item<double>() / ranks;
            sum += theta.grad();
        }
        const torch::Tensor global = sum / ranks;
        bigSq += global.dot(global).item<double>();
    }
    return {smallSq / steps, bigSq / steps};
}

Problem problem(uint64_t seed)
{
    torch::manual_seed(seed);
    const int64_t d = 64;
    Problem p;
    p.mu = torch::randn({d}, torch::kDouble);
    p.theta = p.mu + 0.05 * torch::randn({d}, torch::kDouble);
    p.sigma = 0.02 + 0.1 * torch::rand({d}, torch::kDouble);
    return p;
}

}  // namespace

// B_simple within 5 % of Σσ²/|G|² over 4000 steps at 2 and 4 ranks of 2 and 8 samples each
// (its own spread at that many steps is about 1–2 %); |G|² and tr(Σ) each too.
TEST(GradientNoise, MatchesTheClosedFormOfAQuadraticProblem)
{
    const Problem p = problem(11);
    const double exact = p.traceSigma() / p.gradSq();
    ASSERT_GT(exact, 1.0);  // noise worth measuring: the critical batch is more than one sample
    for (const auto& [ranks, local] : {std::pair{2, int64_t(2)}, {4, int64_t(8)}, {2, int64_t(8)}}) {
        const auto [smallSq, bigSq] = measure(p, ranks, local, 4000, 7);
        const GradientNoise n = estimateGradientNoise(smallSq, bigSq, double(local), double(local * ranks));
        std::cout << ranks << " ranks of " << local << ": B_simple " << n.bSimple << ", closed form " << exact << std::endl;
        EXPECT_NEAR(n.bSimple / exact, 1.0, 0.05) << ranks << " ranks of " << local << ": " << n.bSimple << " vs " << exact;
        EXPECT_NEAR(n.traceSigma / p.traceSigma(), 1.0, 0.05) << ranks << "×" << local;
        EXPECT_NEAR(n.gradSq / p.gradSq(), 1.0, 0.05) << ranks << "×" << local;
    }
}

// The estimator itself, by hand: E|G_B|² = |G|² + tr(Σ)/B at two sizes gives them back exactly;
// a noise that hides the signal (|G|² ≤ 0) is no B_simple; sizes out of order are refused.
TEST(GradientNoise, InvertsTheExpectedNormsExactly)
{
    const double g2 = 3.0, tr = 120.0;
    const GradientNoise n = estimateGradientNoise(g2 + tr / 4, g2 + tr / 16, 4, 16);
    EXPECT_NEAR(n.gradSq, g2, 1e-12);
    EXPECT_NEAR(n.traceSigma, tr, 1e-9);
    EXPECT_NEAR(n.bSimple, 40.0, 1e-9);
    EXPECT_EQ(estimateGradientNoise(1.0, 1.0, 4, 16).bSimple, 0.0);           // no decrease with the batch: no noise
    EXPECT_TRUE(std::isnan(estimateGradientNoise(10.0, 1.0, 4, 8).bSimple));  // |G|² < 0
    EXPECT_THROW(estimateGradientNoise(1.0, 1.0, 8, 8), std::invalid_argument);
    EXPECT_THROW(estimateGradientNoise(1.0, 1.0, 0, 8), std::invalid_argument);
}
