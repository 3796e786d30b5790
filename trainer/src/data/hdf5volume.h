#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace scaledesk::train {

/// A problem with a data file; the message names the file and, where it applies, the dataset.
class DataError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Throws DataError unless `path` is a readable HDF5 file ("no such file", "not a readable HDF5
/// file"): what opening it checks first, for a check before anything is written.
void checkVolumeFile(const std::string& path);

/// Read access to an HDF5 file in the NERSC layout: float datasets shaped (C, L, L, L).
/// Thread-safe (Debian's libhdf5 is built thread-safe; calls are serialised inside the library).
class H5Volume {
public:
    /// Opens `path` read-only; throws DataError when it is missing or not HDF5.
    explicit H5Volume(const std::string& path);
    ~H5Volume();
    H5Volume(const H5Volume&) = delete;
    H5Volume& operator=(const H5Volume&) = delete;

    const std::string& path() const { return m_path; }

    /// Dims of `dataset`; throws DataError naming the file and dataset when it is absent.
    std::vector<int64_t> dims(const std::string& dataset) const;

    /// Checks that `dataset` is a float dataset shaped (channels, box, box, box).
    void requireShape(const std::string& dataset, int64_t channels, int64_t box) const;

    /// Reads the hyperslab [0:C, x:x+n, y:y+n, z:z+n] into `out` (C·n³ floats, C-order).
    void readCrop(const std::string& dataset, int64_t channels, int64_t x, int64_t y, int64_t z, int64_t n, float* out) const;

    /// Reads the whole dataset into `out`.
    void readAll(const std::string& dataset, float* out) const;

private:
    std::string m_path;
    int64_t m_file = -1;
};

/// Writes float datasets to a new HDF5 file atomically: data go to `<path>.tmp-<pid>` and the
/// file is renamed into place by commit(); an uncommitted writer removes its temporary file.
class H5Writer {
public:
    explicit H5Writer(std::string path);
    ~H5Writer();
    H5Writer(const H5Writer&) = delete;
    H5Writer& operator=(const H5Writer&) = delete;

    void write(const std::string& dataset, const std::vector<int64_t>& dims, const float* data);
    void commit();

private:
    std::string m_path;
    std::string m_tmpPath;
    int64_t m_file = -1;
};

}  // namespace scaledesk::train
