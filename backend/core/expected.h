#pragma once

#include <QString>

#include <optional>
#include <utility>
#include <variant>

namespace scaledesk {

/// A failure that happens in real life (bad input, unreachable host, rejected job): a stable
/// code, a message for people, and where it happened (file:line:column, or a host) when known.
struct Error {
    QString code;
    QString message;
    QString location;

    /// "location: message", or the message alone.
    QString text() const { return location.isEmpty() ? message : location + QStringLiteral(": ") + message; }
};

/// A value or an Error (C++17 stand-in for std::expected).
template <typename T>
class Expected {
public:
    Expected(T value) : m_data(std::move(value)) {}
    Expected(Error error) : m_data(std::move(error)) {}

    bool hasValue() const { return m_data.index() == 0; }
    explicit operator bool() const { return hasValue(); }
    const T& value() const& { return std::get<0>(m_data); }
    T& value() & { return std::get<0>(m_data); }
    T&& value() && { return std::get<0>(std::move(m_data)); }
    const T& operator*() const& { return value(); }
    const T* operator->() const { return &value(); }
    const Error& error() const { return std::get<1>(m_data); }

private:
    std::variant<T, Error> m_data;
};

}  // namespace scaledesk
