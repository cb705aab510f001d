// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

// Bytes the program has allocated and not freed. glibc's mallinfo2 knows nothing of the sanitizer
// build's allocator (it reads 0 there, and every size test would compare 0 with 0): under ASan,
// ask ASan, which counts the bytes requested.
#if defined(__SANITIZE_ADDRESS__)
// From ASan's runtime (sanitizer/allocator_interface.h, which GCC's packages do not install).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
inline std::size_t heap_in_use() {
  return __sanitizer_get_current_allocated_bytes();
}
#else
#include <malloc.h>
inline std::size_t heap_in_use() {
  return mallinfo2().uordblks;
}
#endif
