// SPDX-License-Identifier: Apache-2.0
// asop::testing::TestNamespace: a namespace per test case, ready when Pods could run in it.
#include "asop/testing/test_namespace.h"

#include <cctype>
#include <cstdlib>
#include <random>
#include <stdexcept>

#include "asop/testing/eventually.h"
#include "asop/testing/test_client.h"

namespace asop::testing {
namespace {

const auto kNamespaces = ResourcePath::from_api_version("v1", "namespaces");

// A DNS label (63 at most) from a test's name, with room for the suffix.
std::string label_from(std::string_view hint) {
  std::string out;
  for (char c : hint) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
    if (out.size() >= 48) break;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "test" : out;
}

std::string random_suffix() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  constexpr std::string_view chars = "bcdfghjklmnpqrstvwxz2456789";
  std::string s;
  for (int i = 0; i < 6; ++i) s += chars[rng() % chars.size()];
  return s;
}

}  // namespace

TestNamespace::TestNamespace(const ControlPlane& control_plane, std::string_view hint)
    : control_plane_(control_plane), name_(label_from(hint) + "-" + random_suffix()) {
  TestClient client(control_plane_);
  auto created =
      client.create(kNamespaces, R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" +
                                     name_ + R"(","labels":{"asop-testing":"true"}}})");
  if (!created) {
    throw std::runtime_error("asop::testing: creating namespace " + name_ + ": " +
                             created.error().message);
  }
  // The ServiceAccount controller makes "default"; until then a Pod of the namespace is refused.
  const auto account =
      ResourcePath::from_api_version("v1", "serviceaccounts").in_namespace(name_).named("default");
  if (!eventually([&] { return client.get(account).ok(); }, std::chrono::seconds(30))) {
    throw std::runtime_error(
        "asop::testing: namespace " + name_ +
        " has no default ServiceAccount after 30 s: is kube-controller-manager "
        "running?");
  }
}

TestNamespace::~TestNamespace() {
  const char* keep = std::getenv("ASOP_TESTING_KEEP_NAMESPACES");
  if (keep_ || (keep != nullptr && std::string_view(keep) == "1")) return;
  try {
    TestClient client(control_plane_);
    (void)client.remove(kNamespaces.named(name_));
  } catch (...) {
    // A destructor must not throw: the namespace is left, the next run's does not collide.
  }
}

}  // namespace asop::testing
