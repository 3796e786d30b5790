#pragma once

#include "core/error.h"

#include <utility>
#include <variant>

namespace scaledesk {

/// A value or an Error (C++17 stand-in for std::expected). [[nodiscard]]: a dropped result is a
/// dropped failure, so the compiler refuses to let it pass silently.
template <typename T>
class [[nodiscard]] Expected {
public:
    Expected(T value) : m_data(std::move(value)) {}
    Expected(Error error) : m_data(std::move(error)) {}

    bool hasValue() const { return m_data.index() == 0; }
    explicit operator bool() const { return hasValue(); }
    const T& value() const& { return std::get<0>(m_data); }
    T& value() & { return std::get<0>(m_data); }
    T&& value() && { return std::get<0>(std::move(m_data)); }
    const T& operator*() const& { return value(); }
    T& operator*() & { return value(); }
    const T* operator->() const { return &value(); }
    T* operator->() { return &value(); }
    const Error& error() const { return std::get<1>(m_data); }

private:
    std::variant<T, Error> m_data;
};

}  // namespace scaledesk
