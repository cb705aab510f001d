// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "asop/client.h"
#include "asop/errors.h"
#include "asop/kind.h"
#include "asop/testing/control_plane.h"

namespace asop::testing {

// The test's own client: blocking calls straight to the API server (no cache, no fault proxy),
// on a thread of its own, so a test reads what the server holds while the controller under test
// runs. Answers are the Client's: Result<ApiResponse>.
class TestClient {
 public:
  using Response = Result<ApiResponse>;

  explicit TestClient(const ControlPlane& control_plane);
  ~TestClient();
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  Response get(const ResourcePath& object);
  Response list(const ResourcePath& collection, std::string_view label_selector = {});
  Response create(const ResourcePath& collection, JsonBody body);
  // Server-side apply, forced, as `field_manager`.
  Response apply(const ResourcePath& object, JsonBody body,
                 std::string_view field_manager = "asop-test");
  Response patch(const ResourcePath& object, PatchType type, JsonBody body);
  Response remove(const ResourcePath& object, DeleteOptions options = {});

  // A field of `object` at a dotted path ("status.phase", "data.key") as text: a string as it is,
  // a number or boolean printed, a list of strings joined with ","; empty when the object or the
  // field is not there. The probe of most REQUIRE_EVENTUALLY lines.
  std::string field(const ResourcePath& object, std::string_view path);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace asop::testing
