// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace ctrl {

// Hands the allocator's free pages back to the kernel (glibc's malloc_trim). glibc keeps memory a
// burst freed (a list replaced, a wave of objects deleted) mapped for reuse, so without this RSS
// stays at the burst's peak. Called when work ends, not per object: it walks the heap.
void release_free_heap();

}  // namespace ctrl
