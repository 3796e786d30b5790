#pragma once

#include "dist/comm.h"

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>

namespace scaledesk::train {

/// A CommWork completed by another thread: complete() or fail() once, wait() blocks until then.
class ThreadWork : public CommWork {
public:
    void complete()
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_completedAt = std::chrono::steady_clock::now();
        m_done = true;
        m_cv.notify_all();
    }
    void fail(std::exception_ptr error)
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_error = error;
        m_completedAt = std::chrono::steady_clock::now();
        m_done = true;
        m_cv.notify_all();
    }
    void wait() override
    {
        std::unique_lock<std::mutex> lock(m_mutex);
        m_cv.wait(lock, [this] { return m_done; });
        if (m_error) std::rethrow_exception(m_error);
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_done = false;
    std::exception_ptr m_error;
};

/// Work that is already done.
inline CommHandle doneWork()
{
    auto w = std::make_shared<ThreadWork>();
    w->complete();
    return w;
}

}  // namespace scaledesk::train
