#include "data/hdf5volume.h"

#include <hdf5.h>

#include <cstdio>
#include <filesystem>
#include <mutex>
#include <unistd.h>

namespace scaledesk::train {

namespace {

// HDF5 prints its own error stack to stderr by default; we report one clear line instead.
void silenceHdf5()
{
    static const bool done = [] {
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
        return true;
    }();
    (void)done;
}

// HDF5 serialises its own calls only when it was built thread-safe (Debian's serial build is not):
// then every call from here holds this lock, so the loader threads never enter the library at once.
std::unique_lock<std::recursive_mutex> hdf5Lock()
{
    static std::recursive_mutex mutex;
    static const bool threadsafe = [] {
        hbool_t safe = 0;
        return H5is_library_threadsafe(&safe) >= 0 && safe > 0;
    }();
    return threadsafe ? std::unique_lock<std::recursive_mutex>() : std::unique_lock<std::recursive_mutex>(mutex);
}

struct Handle {
    hid_t id;
    herr_t (*close)(hid_t);
    ~Handle()
    {
        if (id >= 0) close(id);
    }
};

std::string shapeText(const std::vector<int64_t>& dims)
{
    std::string s = "(";
    for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + (dims.size() == 1 ? ",)" : ")");
}

}  // namespace

void checkVolumeFile(const std::string& path)
{
    const auto serial = hdf5Lock();
    silenceHdf5();
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw DataError(path + ": no such file");
    if (H5Fis_hdf5(path.c_str()) <= 0) throw DataError(path + ": not a readable HDF5 file");
}

H5Volume::H5Volume(const std::string& path) : m_path(path)
{
    checkVolumeFile(path);
    const auto serial = hdf5Lock();
    m_file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (m_file < 0) throw DataError(path + ": cannot open as HDF5");
}

H5Volume::~H5Volume()
{
    const auto serial = hdf5Lock();
    if (m_file >= 0) H5Fclose(hid_t(m_file));
}

std::vector<int64_t> H5Volume::dims(const std::string& dataset) const
{
    const auto serial = hdf5Lock();
    if (H5Lexists(hid_t(m_file), dataset.c_str(), H5P_DEFAULT) <= 0) throw DataError(m_path + ": no dataset '" + dataset + "'");
    Handle ds{H5Dopen2(hid_t(m_file), dataset.c_str(), H5P_DEFAULT), H5Dclose};
    if (ds.id < 0) throw DataError(m_path + ": cannot open dataset '" + dataset + "'");
    Handle space{H5Dget_space(ds.id), H5Sclose};
    const int rank = H5Sget_simple_extent_ndims(space.id);
    if (rank < 0) throw DataError(m_path + ": cannot read the shape of dataset '" + dataset + "'");
    std::vector<hsize_t> d(std::size_t(rank), 0);
    H5Sget_simple_extent_dims(space.id, d.data(), nullptr);
    return std::vector<int64_t>(d.begin(), d.end());
}

void H5Volume::requireShape(const std::string& dataset, int64_t channels, int64_t box) const
{
    const auto serial = hdf5Lock();
    const auto d = dims(dataset);
    const std::vector<int64_t> want = {channels, box, box, box};
    if (d != want)
        throw DataError(m_path + ": dataset '" + dataset + "' has shape " + shapeText(d) + ", expected " + shapeText(want) +
                        " (channels, box_size, box_size, box_size)");
    Handle ds{H5Dopen2(hid_t(m_file), dataset.c_str(), H5P_DEFAULT), H5Dclose};
    Handle type{H5Dget_type(ds.id), H5Tclose};
    if (H5Tget_class(type.id) != H5T_FLOAT) throw DataError(m_path + ": dataset '" + dataset + "' is not a floating-point dataset");
}

void H5Volume::readCrop(const std::string& dataset, int64_t channels, int64_t x, int64_t y, int64_t z, int64_t n, float* out) const
{
    const auto serial = hdf5Lock();
    Handle ds{H5Dopen2(hid_t(m_file), dataset.c_str(), H5P_DEFAULT), H5Dclose};
    if (ds.id < 0) throw DataError(m_path + ": cannot open dataset '" + dataset + "'");
    Handle space{H5Dget_space(ds.id), H5Sclose};
    const hsize_t start[4] = {0, hsize_t(x), hsize_t(y), hsize_t(z)};
    const hsize_t count[4] = {hsize_t(channels), hsize_t(n), hsize_t(n), hsize_t(n)};
    if (H5Sselect_hyperslab(space.id, H5S_SELECT_SET, start, nullptr, count, nullptr) < 0)
        throw DataError(m_path + ": crop at (" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) +
                        ") is outside dataset '" + dataset + "'");
    Handle mem{H5Screate_simple(4, count, nullptr), H5Sclose};
    if (H5Dread(ds.id, H5T_NATIVE_FLOAT, mem.id, space.id, H5P_DEFAULT, out) < 0)
        throw DataError(m_path + ": read error in dataset '" + dataset + "'");
}

void H5Volume::readAll(const std::string& dataset, float* out) const
{
    const auto serial = hdf5Lock();
    Handle ds{H5Dopen2(hid_t(m_file), dataset.c_str(), H5P_DEFAULT), H5Dclose};
    if (ds.id < 0) throw DataError(m_path + ": cannot open dataset '" + dataset + "'");
    if (H5Dread(ds.id, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
        throw DataError(m_path + ": read error in dataset '" + dataset + "'");
}

H5Writer::H5Writer(std::string path) : m_path(std::move(path))
{
    const auto serial = hdf5Lock();
    silenceHdf5();
    m_tmpPath = m_path + ".tmp-" + std::to_string(::getpid());
    m_file = H5Fcreate(m_tmpPath.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (m_file < 0) throw DataError(m_path + ": cannot create the file (is the folder writable?)");
}

H5Writer::~H5Writer()
{
    const auto serial = hdf5Lock();
    if (m_file >= 0) {
        H5Fclose(hid_t(m_file));
        std::remove(m_tmpPath.c_str());
    }
}

void H5Writer::write(const std::string& dataset, const std::vector<int64_t>& dims, const float* data)
{
    const auto serial = hdf5Lock();
    std::vector<hsize_t> d(dims.begin(), dims.end());
    Handle space{H5Screate_simple(int(d.size()), d.data(), nullptr), H5Sclose};
    // No modification times in the object headers: the same data gives the same bytes, whenever it
    // was written (two files a second apart differed in one byte).
    Handle dcpl{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
    if (dcpl.id < 0 || H5Pset_obj_track_times(dcpl.id, false) < 0) throw DataError(m_path + ": cannot set up dataset '" + dataset + "'");
    Handle ds{H5Dcreate2(hid_t(m_file), dataset.c_str(), H5T_IEEE_F32LE, space.id, H5P_DEFAULT, dcpl.id, H5P_DEFAULT), H5Dclose};
    if (ds.id < 0 || H5Dwrite(ds.id, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
        throw DataError(m_path + ": cannot write dataset '" + dataset + "' (disk full?)");
}

void H5Writer::commit()
{
    const auto serial = hdf5Lock();
    const herr_t closed = H5Fclose(hid_t(m_file));
    m_file = -1;
    std::error_code ec;
    if (closed < 0) {
        std::filesystem::remove(m_tmpPath, ec);
        throw DataError(m_path + ": cannot finish writing the file");
    }
    std::filesystem::rename(m_tmpPath, m_path, ec);
    if (ec) {
        const std::string why = ec.message();
        std::filesystem::remove(m_tmpPath, ec);
        throw DataError(m_path + ": cannot move the finished file into place: " + why);
    }
}

}  // namespace scaledesk::train
