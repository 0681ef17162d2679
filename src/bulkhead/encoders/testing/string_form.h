// Test-only: whether a type can be turned into text (operator<< or a ToString member). Types that
// hold private keys must not be: a key must never reach a log line by accident.
#pragma once

#include <ostream>

namespace bulkhead::testing {

template <typename T>
concept Streamable = requires(std::ostream& os, const T& v) {
  os << v;
};

template <typename T>
concept HasToString = requires(const T& v) {
  v.ToString();
};

template <typename T>
concept HasStringForm = Streamable<T> || HasToString<T>;

}  // namespace bulkhead::testing
