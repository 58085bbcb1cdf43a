// A per-thread allocation budget for third-party parsers (see yaml_doc.cpp).
#include <cstddef>
#include <cstdlib>
#include <new>

//
// yaml-cpp 0.7 has inputs on which its scanner allocates without bound (found by fuzzing; one is
// refused by guard_yaml in yaml_doc.cpp, others are not known in advance). While a document is parsed, every
// allocation on this thread is charged to a budget; past it, the parse fails with bad_alloc, which
// becomes an InputError instead of the machine running out of memory.
namespace kvplan::io::detail {
thread_local std::size_t* parse_budget = nullptr;
}  // namespace kvplan::io::detail

// The global allocation functions: malloc / free, charged to the budget while one is set.
void* operator new(std::size_t n) {
  if (std::size_t* b = kvplan::io::detail::parse_budget) {
    if (n > *b) throw std::bad_alloc();
    *b -= n;
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
