#include "tfrecord.h"

#include <boost/crc.hpp>

#include <cstring>

namespace scaledesk::tb {

namespace {

// CRC-32C: polynomial 0x1EDC6F41, reflected input and output, initial value and final XOR all ones.
using Crc32c = boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true>;

constexpr std::size_t kHeader = 12;  // length (8) + its masked CRC (4)
constexpr std::size_t kFooter = 4;   // masked CRC of the data

std::uint64_t readLe64(const char* p)
{
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
    return v;
}

std::uint32_t readLe32(const char* p)
{
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
    return v;
}

void appendLe(std::string* out, std::uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

std::uint32_t crc32c(const void* data, std::size_t size)
{
    Crc32c crc;
    crc.process_bytes(data, size);
    return crc.checksum();
}

std::uint32_t maskedCrc32c(const void* data, std::size_t size)
{
    const std::uint32_t crc = crc32c(data, size);
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

TfRecordReader::Candidate TfRecordReader::soundAt(std::size_t at)
{
    if (m_size - at < kHeader + kFooter) return Candidate::No;
    const char* p = m_data + at;
    if (readLe32(p + 8) != maskedCrc32c(p, 8)) return Candidate::No;
    const std::uint64_t length = readLe64(p);
    if (length > m_size - at - kHeader - kFooter) return Candidate::No;
    // A length that checks but data that does not: each such candidate costs its length, and a
    // crafted file can hold one every 12 bytes, each claiming the rest of the file. The budget keeps
    // the whole reading linear in the file's size.
    if (m_resyncChecked + length > resyncBudget()) return Candidate::OverBudget;
    m_resyncChecked += length;
    ++m_resyncCandidates;
    return readLe32(p + kHeader + length) == maskedCrc32c(p + kHeader, std::size_t(length)) ? Candidate::Yes : Candidate::No;
}

std::uint64_t TfRecordReader::resyncBudget() const { return 2 * std::uint64_t(m_size) + (1u << 20); }

bool TfRecordReader::next(std::string_view* record, std::uint64_t* offset)
{
    while (m_pos < m_size) {
        const std::size_t left = m_size - m_pos;
        const char* p = m_data + m_pos;
        if (left < kHeader) {
            m_problems.push_back({m_pos, "truncated record: " + std::to_string(left) + " bytes of a 12-byte header"});
            m_truncatedTail = true;
            m_tailAt = m_pos;
            m_pos = m_size;
            return false;
        }
        if (readLe32(p + 8) != maskedCrc32c(p, 8)) {
            // The length is not to be trusted: find the next offset where a whole record checks.
            std::size_t at = m_pos + 1;
            Candidate found = Candidate::No;
            while (at < m_size && (found = soundAt(at)) == Candidate::No) ++at;
            if (found == Candidate::OverBudget) {
                m_problems.push_back({m_pos,
                                      "length CRC mismatch, and the search for the next sound record stopped at offset " +
                                          std::to_string(at) + " after " + std::to_string(m_resyncCandidates) +
                                          " records whose length checks but whose data does not (" + std::to_string(m_resyncChecked) +
                                          " bytes checked, twice the file's size): the rest of the file is skipped"});
                m_pos = m_size;
                return false;
            }
            m_problems.push_back({m_pos,
                                  "length CRC mismatch: " + std::to_string(at - m_pos) + " bytes skipped" +
                                      (at < m_size ? " to the next sound record" : " to the end of the file")});
            m_pos = at;
            continue;
        }
        const std::uint64_t length = readLe64(p);
        if (length > left - kHeader || left - kHeader - length < kFooter) {
            m_problems.push_back({m_pos,
                                  "truncated record: header says " + std::to_string(length) + " bytes of data, " +
                                      std::to_string(left - kHeader) + " bytes left in the file"});
            m_truncatedTail = true;
            m_tailAt = m_pos;
            m_pos = m_size;
            return false;
        }
        const std::uint64_t at = m_pos;
        m_pos += kHeader + std::size_t(length) + kFooter;
        if (readLe32(p + kHeader + length) != maskedCrc32c(p + kHeader, std::size_t(length))) {
            m_problems.push_back({at, "data CRC mismatch in a record of " + std::to_string(length) + " bytes: skipped"});
            continue;
        }
        *record = std::string_view(p + kHeader, std::size_t(length));
        *offset = at;
        return true;
    }
    return false;
}

std::string frameRecord(std::string_view data)
{
    std::string out;
    out.reserve(kHeader + data.size() + kFooter);
    appendLe(&out, data.size(), 8);
    appendLe(&out, maskedCrc32c(out.data(), 8), 4);
    out.append(data.data(), data.size());
    appendLe(&out, maskedCrc32c(data.data(), data.size()), 4);
    return out;
}

}  // namespace scaledesk::tb
