#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace scaledesk::tb {

/// CRC-32C (Castagnoli) of `size` bytes, as TFRecord uses it (Boost.CRC).
std::uint32_t crc32c(const void* data, std::size_t size);
/// TFRecord's masked CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8, so that a CRC stored in the data
/// it covers does not check itself.
std::uint32_t maskedCrc32c(const void* data, std::size_t size);

/// A part of a file that could not be read as a record; reading goes on after it where it can.
struct RecordProblem {
    std::uint64_t offset = 0;  ///< byte offset in the file of the record (or of the bad bytes)
    std::string message;
};

/// Reads TFRecord framing from bytes: each record is its length (uint64, little-endian), the masked
/// CRC-32C of those 8 bytes, the data, and the masked CRC-32C of the data.
/// - A record whose data fails its CRC is reported and skipped (its length was sound).
/// - A length that fails its CRC cannot be trusted: it is reported, and reading resumes at the next
///   offset where a whole record checks (length CRC and data CRC), as a reader that recovers must.
///   The data CRCs that search checks add up to at most twice the file's size (and 1 MiB): a file
///   crafted with more records whose length checks but whose data does not is reported, and the rest
///   of it skipped, so reading is linear in the file's size.
/// - A record cut off by the end of the bytes is reported once and ends the reading.
class TfRecordReader {
public:
    TfRecordReader(const char* data, std::size_t size) : m_data(data), m_size(size) {}
    /// The next sound record: true with its data and offset, false at the end.
    bool next(std::string_view* record, std::uint64_t* offset);
    const std::vector<RecordProblem>& problems() const { return m_problems; }
    /// Bytes consumed so far: everything before it was records or reported problems.
    std::uint64_t position() const { return m_pos; }
    /// Whether the reading ended at a record cut off by the end of the bytes (a file still being
    /// written), and where that record starts.
    bool truncatedTail() const { return m_truncatedTail; }
    std::uint64_t tailOffset() const { return m_tailAt; }
    /// Bytes whose data CRC the search for a sound record checked so far (its work, bounded).
    std::uint64_t resyncBytesChecked() const { return m_resyncChecked; }

private:
    enum class Candidate { No, Yes, OverBudget };
    /// Whether a whole, sound record starts at `at` (used to find the next one after bad bytes).
    Candidate soundAt(std::size_t at);
    std::uint64_t resyncBudget() const;
    const char* m_data;
    std::size_t m_size;
    std::size_t m_pos = 0;
    std::uint64_t m_resyncChecked = 0;
    std::uint64_t m_resyncCandidates = 0;
    std::vector<RecordProblem> m_problems;
    bool m_truncatedTail = false;
    std::uint64_t m_tailAt = 0;
};

/// One record with its framing, ready to append to a file.
std::string frameRecord(std::string_view data);

}  // namespace scaledesk::tb
