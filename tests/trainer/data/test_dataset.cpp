#include "data/dataset.h"
#include "data/hdf5volume.h"
#include "data/makedata.h"
#include "data/rotations.h"

#include "testutil.h"

#include <torch/torch.h>

#include <gtest/gtest.h>

#include <set>

using namespace scaledesk::train;
using scaledesk::test::TempDir;

namespace {

// A volume pair whose first four target channels equal the input channels and whose fifth
// repeats channel 0, so a crop + transform applied identically shows up as equal tensors.
void writeMirrorVolume(const std::string& path, int64_t box, const std::string& targetName = "Hydro", int64_t targetBox = -1)
{
    torch::manual_seed(7);
    const torch::Tensor nbody = torch::rand({4, box, box, box});
    const int64_t tb = targetBox > 0 ? targetBox : box;
    torch::Tensor hydro = torch::cat({nbody, nbody.narrow(0, 0, 1)}, 0).contiguous();
    if (tb != box) hydro = torch::rand({5, tb, tb, tb});
    H5Writer w(path);
    w.write("Nbody", {4, box, box, box}, nbody.data_ptr<float>());
    w.write(targetName, {5, tb, tb, tb}, hydro.data_ptr<float>());
    w.commit();
}

LoaderPlan plan(int64_t samples, int64_t batch, int64_t workers, int64_t crop = 8)
{
    LoaderPlan p;
    p.seed = 11;
    p.crop = crop;
    p.numSamples = samples;
    p.batchSize = batch;
    p.workers = workers;
    return p;
}

std::vector<torch::Tensor> drain(BatchLoader& loader)
{
    std::vector<torch::Tensor> out;
    while (auto b = loader.next()) out.push_back(torch::cat({b->input.flatten(1), b->target.flatten(1)}, 1).clone());
    return out;
}

std::string errorOf(const std::function<void()>& f)
{
    try {
        f();
    } catch (const DataError& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST(Dataset, CropOffsetsStayInsideTheBox)
{
    const int64_t box = 40, crop = 32;
    std::set<int64_t> xs;
    std::set<int> rotations;
    for (int64_t i = 0; i < 20000; ++i) {
        const SampleSpec s = drawSample(3, 0, Stream::Train, 0, i, box, crop);
        for (int64_t v : {s.x, s.y, s.z}) {
            ASSERT_GE(v, 0);
            ASSERT_LE(v, box - crop - 1);  // numpy randint(0, L − crop) never yields L − crop
        }
        xs.insert(s.x);
        rotations.insert(s.rotation);
    }
    EXPECT_EQ(xs.size(), std::size_t(box - crop));  // 0 … 7 all drawn
    EXPECT_EQ(*xs.rbegin(), box - crop - 1);
    EXPECT_EQ(rotations.size(), 24u);
}

TEST(Dataset, StreamsAreReproducibleAndIndependent)
{
    const SampleSpec a = drawSample(5, 0, Stream::Train, 2, 17, 128, 32);
    const SampleSpec b = drawSample(5, 0, Stream::Train, 2, 17, 128, 32);
    EXPECT_EQ(std::tie(a.x, a.y, a.z, a.rotation), std::tie(b.x, b.y, b.z, b.rotation));
    int same = 0;
    for (int64_t i = 0; i < 200; ++i) {
        const SampleSpec r0 = drawSample(5, 0, Stream::Train, 0, i, 128, 32);
        const SampleSpec r1 = drawSample(5, 1, Stream::Train, 0, i, 128, 32);
        same += (r0.x == r1.x && r0.y == r1.y && r0.z == r1.z);
    }
    EXPECT_LT(same, 3);  // ranks draw their own crops
}

TEST(Dataset, TransformIsAppliedIdenticallyToInputAndTarget)
{
    TempDir dir;
    const int64_t box = 20, crop = 8;
    writeMirrorVolume(dir.file("v.h5"), box);
    auto source = openVolumeSource(DataLoaderMode::Lowmem, dir.file("v.h5"), box, 5, 0);
    BatchLoader loader(source, plan(24, 4, 2, crop));
    H5Volume raw(dir.file("v.h5"));
    std::set<int> rotationsSeen;
    int64_t sample = 0;
    while (auto b = loader.next()) {
        for (int64_t i = 0; i < b->input.size(0); ++i, ++sample) {
            // Same window, same rotation: target channels 0–3 equal the input, channel 4 equals input 0.
            ASSERT_TRUE(torch::equal(b->input[i], b->target[i].narrow(0, 0, 4)));
            ASSERT_TRUE(torch::equal(b->input[i][0], b->target[i][4]));
            // And it is exactly the table's transform of the crop the spec names.
            const SampleSpec s = drawSample(11, 0, Stream::Train, 0, sample, box, crop);
            rotationsSeen.insert(s.rotation);
            torch::Tensor window = torch::empty({4, crop, crop, crop});
            raw.readCrop("Nbody", 4, s.x, s.y, s.z, crop, window.data_ptr<float>());
            ASSERT_TRUE(torch::equal(b->input[i], applyTransform(window, rotatorTable()[std::size_t(s.rotation)])));
        }
    }
    EXPECT_EQ(sample, 24);
    EXPECT_GT(rotationsSeen.size(), 5u);
}

TEST(Dataset, WorkersInmemAndResumeGiveTheSameBatches)
{
    TempDir dir;
    writeMirrorVolume(dir.file("v.h5"), 16);
    auto lowmem = openVolumeSource(DataLoaderMode::Lowmem, dir.file("v.h5"), 16, 5, 0);
    auto inmem = openVolumeSource(DataLoaderMode::Inmem, dir.file("v.h5"), 16, 5, 0);
    BatchLoader serial(lowmem, plan(22, 4, 0));
    const auto reference = drain(serial);
    ASSERT_EQ(reference.size(), 6u);  // ⌈22 / 4⌉, last batch partial
    EXPECT_EQ(reference.back().size(0), 2);
    BatchLoader threaded(lowmem, plan(22, 4, 3));
    BatchLoader memory(inmem, plan(22, 4, 2));
    LoaderPlan resumePlan = plan(22, 4, 2);
    resumePlan.firstBatch = 3;
    BatchLoader resumed(lowmem, resumePlan);
    const auto a = drain(threaded), b = drain(memory), c = drain(resumed);
    ASSERT_EQ(a.size(), reference.size());
    ASSERT_EQ(b.size(), reference.size());
    ASSERT_EQ(c.size(), 3u);
    for (std::size_t i = 0; i < reference.size(); ++i) {
        EXPECT_TRUE(torch::equal(a[i], reference[i])) << i;
        EXPECT_TRUE(torch::equal(b[i], reference[i])) << i;
        if (i >= 3) {
            EXPECT_TRUE(torch::equal(c[i - 3], reference[i])) << i;
        }
    }
}

TEST(Dataset, BadFilesNameTheFileAndTheProblem)
{
    TempDir dir;
    EXPECT_EQ(errorOf([&] { openVolumeSource(DataLoaderMode::Lowmem, dir.file("none.h5"), 16, 5, 0); }),
              dir.file("none.h5") + ": no such file");
    scaledesk::test::writeFile(dir.file("text.h5"), "this is not HDF5\n");
    EXPECT_EQ(errorOf([&] { openVolumeSource(DataLoaderMode::Lowmem, dir.file("text.h5"), 16, 5, 0); }),
              dir.file("text.h5") + ": not a readable HDF5 file");
    writeMirrorVolume(dir.file("names.h5"), 16, "Hydrox");
    EXPECT_EQ(errorOf([&] { openVolumeSource(DataLoaderMode::Lowmem, dir.file("names.h5"), 16, 5, 0); }),
              dir.file("names.h5") + ": no dataset 'Hydro'");
    writeMirrorVolume(dir.file("shape.h5"), 16, "Hydro", 12);
    EXPECT_EQ(errorOf([&] { openVolumeSource(DataLoaderMode::Inmem, dir.file("shape.h5"), 16, 5, 0); }),
              dir.file("shape.h5") +
                  ": dataset 'Hydro' has shape (5, 12, 12, 12), expected (5, 16, 16, 16) "
                  "(channels, box_size, box_size, box_size)");
    writeMirrorVolume(dir.file("box.h5"), 16);
    EXPECT_EQ(errorOf([&] { openVolumeSource(DataLoaderMode::Lowmem, dir.file("box.h5"), 64, 5, 0); }),
              dir.file("box.h5") +
                  ": dataset 'Nbody' has shape (4, 16, 16, 16), expected (4, 64, 64, 64) "
                  "(channels, box_size, box_size, box_size)");
}

TEST(Dataset, MakeDataWritesTheNerscLayoutInRange)
{
    TempDir dir;
    MakeDataOptions o;
    o.outDir = dir.file("data");
    o.trainBox = 24;
    o.valBox = 20;
    makeData(o);
    H5Volume train(dir.file("data/train.h5"));
    EXPECT_NO_THROW(train.requireShape("Nbody", 4, 24));
    EXPECT_NO_THROW(train.requireShape("Hydro", 5, 24));
    H5Volume valid(dir.file("data/valid.h5"));
    EXPECT_NO_THROW(valid.requireShape("Hydro", 5, 20));
    torch::Tensor hydro = torch::empty({5, 24, 24, 24});
    train.readAll("Hydro", hydro.data_ptr<float>());
    EXPECT_LE(hydro.abs().max().item<float>(), 1.0f);
    EXPECT_GT(hydro.std().item<float>(), 0.05f);  // not constant
    // Smooth: neighbouring voxels correlate strongly.
    const auto a = hydro.narrow(3, 0, 23).flatten(), b = hydro.narrow(3, 1, 23).flatten();
    const double corr = torch::corrcoef(torch::stack({a, b})).index({0, 1}).item<double>();
    EXPECT_GT(corr, 0.8);
    // Same seed, same bytes.
    MakeDataOptions again = o;
    again.outDir = dir.file("again");
    makeData(again);
    EXPECT_EQ(scaledesk::test::readFile(dir.file("data/train.h5")), scaledesk::test::readFile(dir.file("again/train.h5")));
}
