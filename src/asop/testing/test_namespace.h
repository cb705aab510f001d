// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

#include "asop/testing/control_plane.h"

namespace asop::testing {

// A namespace for one test case: named from `hint` (a test's name: lower-cased, other characters
// folded to '-', cut to fit) and a random suffix, ready when its default ServiceAccount exists
// (what Pods wait for), deleted at the end: the namespace controller runs, so it really goes.
// ASOP_TESTING_KEEP_NAMESPACES=1, or keep(), leaves it for a post-mortem.
class TestNamespace {
 public:
  TestNamespace(const ControlPlane& control_plane, std::string_view hint);
  ~TestNamespace();
  TestNamespace(const TestNamespace&) = delete;
  TestNamespace& operator=(const TestNamespace&) = delete;

  const std::string& name() const { return name_; }
  operator const std::string&() const { return name_; }
  operator std::string_view() const { return name_; }
  void keep() { keep_ = true; }

 private:
  const ControlPlane& control_plane_;
  std::string name_;
  bool keep_ = false;
};

}  // namespace asop::testing
