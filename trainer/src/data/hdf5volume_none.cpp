// Built when HDF5 was not found: every file operation reports that this build cannot read HDF5.
#include "data/hdf5volume.h"

namespace scaledesk::train {

namespace {
[[noreturn]] void unavailable(const std::string& path)
{
    throw DataError(path +
                    ": this scaledesk-train was built without HDF5 (use data_loader_config: synthetic, or "
                    "rebuild with libhdf5-dev)");
}
}  // namespace

void checkVolumeFile(const std::string& path) { unavailable(path); }
H5Volume::H5Volume(const std::string& path) : m_path(path) { unavailable(path); }
H5Volume::~H5Volume() = default;
std::vector<int64_t> H5Volume::dims(const std::string&) const { unavailable(m_path); }
void H5Volume::requireShape(const std::string&, int64_t, int64_t) const { unavailable(m_path); }
void H5Volume::readCrop(const std::string&, int64_t, int64_t, int64_t, int64_t, int64_t, float*) const { unavailable(m_path); }
void H5Volume::readAll(const std::string&, float*) const { unavailable(m_path); }
H5Writer::H5Writer(std::string path) : m_path(std::move(path)) { unavailable(m_path); }
H5Writer::~H5Writer() = default;
void H5Writer::write(const std::string&, const std::vector<int64_t>&, const float*) { unavailable(m_path); }
void H5Writer::commit() { unavailable(m_path); }

}  // namespace scaledesk::train
