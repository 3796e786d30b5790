#include "dist/commerrors.h"

namespace scaledesk::train {

namespace {

bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

std::string firstLineOf(const std::string& text)
{
    std::string s = text.substr(0, text.find('\n'));
    return s.size() > 300 ? s.substr(0, 300) + "…" : s;
}

}  // namespace

std::string describeNcclFailure(int rank, const std::string& op, const std::string& what, const std::string& limit,
                                const std::string& silent)
{
    std::string why;
    if (has(what, "Duplicate GPU detected"))
        why = "two ranks were given the same GPU; NCCL needs one GPU per rank (start at most as many ranks per node as it has "
              "GPUs, or give each task its own with srun --gpus-per-task=1)";
    else if (has(what, "Watchdog caught collective operation timeout") || has(what, "timed out") || has(what, "Timeout"))
        why = "timed out (limit " + limit + ")";
    else if (has(what, "aborted"))
        why = "the NCCL communicator was aborted after an earlier failure of this job";
    else if (has(what, "remote process exited") || has(what, "Connection closed by remote peer") || has(what, "Connection reset"))
        why = "a peer rank went away";
    else
        why = "failed";
    return "rank " + std::to_string(rank) + ": " + op + " " + why + ": " + firstLineOf(what) + silent;
}

}  // namespace scaledesk::train
