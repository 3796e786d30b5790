#pragma once

// A collective of libtorch's c10d process groups (gloo, nccl) as a CommWork: wait() waits for it,
// throws a CommError whose text the backend writes (rank, operation, who stopped answering), then
// runs what must follow the collective (a copy back, a scale). Only for files built with c10d.

#include "dist/comm.h"

#include <torch/csrc/distributed/c10d/Work.hpp>

#include <functional>
#include <string>

namespace scaledesk::train {

class C10dWork : public CommWork {
public:
    /// The error line of a failed `op`, from the exception's text.
    using Describe = std::function<std::string(const std::string& op, const std::string& what)>;

    C10dWork(std::string op, c10::intrusive_ptr<c10d::Work> work, std::function<void()> after, Describe describe)
        : m_op(std::move(op)), m_work(std::move(work)), m_after(std::move(after)), m_describe(std::move(describe))
    {}

    void wait() override
    {
        try {
            m_work->wait();
            // An error the process group recorded without throwing (nccl's watchdog after an abort).
            if (std::exception_ptr error = m_work->exception()) std::rethrow_exception(error);
        } catch (const std::exception& e) {
            throw CommError(m_describe(m_op, e.what()));
        }
        if (m_after) m_after();
        m_completedAt = std::chrono::steady_clock::now();  // c10d does not report when it finished
    }

protected:
    const c10::intrusive_ptr<c10d::Work>& work() const { return m_work; }

private:
    std::string m_op;
    c10::intrusive_ptr<c10d::Work> m_work;
    std::function<void()> m_after;
    Describe m_describe;
};

}  // namespace scaledesk::train
