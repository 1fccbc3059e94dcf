// An enum's names, in one table a type: the name of a value and the value of a name. Every
// spec key and option that takes one of a few words (modes, models, topologies, ...) reads and
// writes it through here, so that all say the same when a word is wrong.
#pragma once

#include <cstddef>
#include <string>

#include "base/error.h"

namespace gbasim {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

// The value named `name`. Throws InputError: must be "a", "b" or "c", not 'name'.
template <class E, size_t N>
E parse_enum(const std::string& name, const EnumName<E> (&table)[N]) {
  for (const EnumName<E>& entry : table)
    if (name == entry.name) return entry.value;
  std::string words;
  for (size_t i = 0; i < N; ++i)
    words += (i == 0 ? "\"" : i + 1 == N ? " or \"" : ", \"") + std::string(table[i].name) + "\"";
  throw InputError("must be " + words + ", not '" + name + "'");
}

// The name of `value`; "" for a value the table lacks.
template <class E, size_t N>
std::string enum_name(E value, const EnumName<E> (&table)[N]) {
  for (const EnumName<E>& entry : table)
    if (entry.value == value) return entry.name;
  return "";
}

}  // namespace gbasim
