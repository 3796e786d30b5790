#include "data/makedata.h"

#include "data/hdf5volume.h"

#include <torch/torch.h>

#include <filesystem>

namespace scaledesk::train {

namespace {

torch::Tensor smoothFields(int64_t channels, int64_t box, double correlationLength, uint64_t seed)
{
    auto gen = at::detail::createCPUGenerator(seed);
    torch::Tensor noise = at::randn({channels, box, box, box}, gen, torch::kFloat);
    torch::Tensor spectrum = torch::fft::rfftn(noise, c10::nullopt, std::vector<int64_t>{1, 2, 3});
    // Gaussian low-pass on the periodic grid: exp(−½ (2π k σ / L)²) with k in cycles per box.
    auto freqs = [box](int64_t n) { return torch::fft::fftfreq(n).mul(double(box)); };
    const torch::Tensor kx = freqs(box).view({box, 1, 1});
    const torch::Tensor ky = freqs(box).view({1, box, 1});
    const torch::Tensor kz = torch::fft::rfftfreq(box, 1.0, torch::kFloat).mul(double(box)).view({1, 1, box / 2 + 1});
    const double scale = 2.0 * M_PI * correlationLength / double(box);
    const torch::Tensor k2 = kx.pow(2) + ky.pow(2) + kz.pow(2);
    spectrum.mul_(torch::exp(k2.mul(-0.5 * scale * scale)).unsqueeze(0));
    torch::Tensor fields = torch::fft::irfftn(spectrum, std::vector<int64_t>{box, box, box}, std::vector<int64_t>{1, 2, 3});
    const torch::Tensor std = fields.flatten(1).std(1).view({channels, 1, 1, 1});
    return fields.div(std);  // unit variance per channel
}

void writeSplit(const std::string& path, int64_t box, double correlationLength, uint64_t seed)
{
    const torch::Tensor g = smoothFields(4, box, correlationLength, seed);
    // Inputs: density-like and three velocity-like channels, squashed into (−1, 1).
    torch::Tensor nbody = torch::tanh(g.mul(0.5)).contiguous();
    const torch::Tensor n0 = nbody[0], n1 = nbody[1], n2 = nbody[2], n3 = nbody[3];
    // Targets: a fixed pointwise map of the inputs, every value inside [−1, 1].
    torch::Tensor hydro = torch::stack({
                                           torch::tanh(n0.mul(1.6)).mul(0.8),          // baryon density
                                           n1.mul(0.6).add(n0.mul(0.3)),               // v_x
                                           n2.mul(0.6).sub(n0.mul(n0).mul(0.3)),       // v_y
                                           n3.mul(0.6).add(n1.mul(n2).mul(0.3)),       // v_z
                                           torch::tanh(n0.sub(n3).mul(1.2)).mul(0.7),  // temperature
                                       })
                              .contiguous();
    H5Writer writer(path);
    writer.write("Nbody", {4, box, box, box}, nbody.data_ptr<float>());
    writer.write("Hydro", {5, box, box, box}, hydro.data_ptr<float>());
    writer.commit();
}

}  // namespace

void makeData(const MakeDataOptions& options)
{
    namespace fs = std::filesystem;
    if (options.trainBox < 2 || options.valBox < 2) throw DataError("make-data: --box and --val-box must be at least 2");
    std::error_code ec;
    fs::create_directories(options.outDir, ec);
    if (ec || !fs::is_directory(options.outDir))
        throw DataError(options.outDir + ": cannot create the output folder" + (ec ? ": " + ec.message() : ""));
    writeSplit((fs::path(options.outDir) / "train.h5").string(), options.trainBox, options.correlationLength, options.seed);
    writeSplit((fs::path(options.outDir) / "valid.h5").string(), options.valBox, options.correlationLength,
               options.seed ^ 0x5ca1ede5c0ffeeULL);
}

}  // namespace scaledesk::train
