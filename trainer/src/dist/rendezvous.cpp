#include "dist/rendezvous.h"

#include "compat/torchcompat.h"

#if defined(USE_C10D_GLOO) || defined(USE_C10D_NCCL)

#include <thread>

namespace scaledesk::train {

std::string secondsText(std::chrono::milliseconds ms) { return std::to_string(ms.count() / 1000.0).substr(0, 5) + " s"; }

std::string firstLine(const std::string& text)
{
    std::string s = text.substr(0, text.find('\n'));
    return s.size() > 300 ? s.substr(0, 300) + "…" : s;
}

c10::intrusive_ptr<c10d::TCPStore> openRendezvousStore(const DistEnv& env, std::chrono::milliseconds timeout)
{
    c10d::TCPStoreOptions options;
    options.port = uint16_t(env.masterPort);
    options.isServer = env.rank == 0;
    options.numWorkers = size_t(env.size);
    options.waitWorkers = true;
    options.timeout = timeout;
    compat::usePlainTcpStore(options);
    try {
        return c10::make_intrusive<c10d::TCPStore>(env.masterAddr, options);
    } catch (const std::exception& e) {
        throw CommError("rank " + std::to_string(env.rank) + ": rendezvous at " + env.masterAddr + ":" + std::to_string(env.masterPort) +
                        " (MASTER_ADDR:MASTER_PORT) did not complete within " + secondsText(timeout) + " while waiting for " +
                        (env.rank == 0 ? "all " + std::to_string(env.size) + " ranks to connect" : "rank 0's store") + ": " +
                        firstLine(e.what()));
    }
}

std::string silentRanks(c10d::TCPStore& store, int rank, int size)
{
    try {
        store.setTimeout(std::chrono::milliseconds(2000));
        store.set("failed/" + std::to_string(rank), std::vector<uint8_t>{1});
        std::string silent;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
        for (;;) {
            silent.clear();
            for (int r = 0; r < size; ++r)
                if (!store.check({"failed/" + std::to_string(r)})) silent += (silent.empty() ? "" : ", ") + std::to_string(r);
            if (silent.empty() || std::chrono::steady_clock::now() > deadline) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return silent.empty() ? std::string() : "; rank(s) not responding: " + silent;
    } catch (const std::exception&) {
        return "; the rendezvous store on rank 0 is unreachable: rank 0 is not responding";
    }
}

}  // namespace scaledesk::train

#endif
