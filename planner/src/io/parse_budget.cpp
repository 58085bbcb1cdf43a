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

// The global allocation functions, all of them on malloc / free so every new pairs with its delete
// (sanitizer runtimes check the pairing), charged to the budget while one is set. The aligned forms
// stay the runtime's.
namespace {
void* allocate(std::size_t n) {
  if (std::size_t* b = kvplan::io::detail::parse_budget) {
    if (n > *b) return nullptr;
    *b -= n;
  }
  return std::malloc(n ? n : 1);
}
}  // namespace

void* operator new(std::size_t n) {
  if (void* p = allocate(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = allocate(n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
