// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace ctrl {

// std::visit over a variant with one lambda per alternative.
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};

}  // namespace ctrl
