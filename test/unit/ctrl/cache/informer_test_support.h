// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

#include <memory>
#include <string>

#include "ctrl/cache/informer_state.h"
#include "support/fake_api_server.h"

namespace ctrl::testing {

// A minimal object: {"metadata":{"namespace":ns,"name":name,"resourceVersion":rv[,"uid"...]}}.
inline ObjectPtr make_object(const std::string& ns, const std::string& name, const std::string& rv,
                             const std::string& owner_uid = {}) {
  auto doc = std::make_shared<rapidjson::Document>();
  std::string json = R"({"metadata":{"namespace":")" + ns + R"(","name":")" + name +
                     R"(","resourceVersion":")" + rv + R"(","uid":"uid-)" + name + "\"";
  if (!owner_uid.empty()) {
    json += R"(,"ownerReferences":[{"apiVersion":"v1","kind":"X","name":"o","uid":"other",)"
            R"("controller":false},{"apiVersion":"app.example.com/v1","kind":"AppService",)"
            R"("name":"owner","uid":")" +
            owner_uid + R"(","controller":true}])";
  }
  json += "}}";
  doc->Parse(json.c_str());
  return doc;
}

// Fake API server requests and replies for list+watch.
inline bool has(const kube::testing::FakeApiServer::Request& r, const std::string& part) {
  return r.target.find(part) != std::string::npos;
}
inline bool is_watch(const kube::testing::FakeApiServer::Request& r) {
  return has(r, "watch=1");
}
// A watch the server keeps open and quiet.
inline kube::testing::FakeApiServer::Reply quiet_watch() {
  return kube::testing::FakeApiServer::Reply::stream_of({}, true);
}
// A watch that ends with an ERROR event: 410 Expired.
inline kube::testing::FakeApiServer::Reply gone_watch() {
  return kube::testing::FakeApiServer::Reply::stream_of(
      {R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure",)"
       R"("message":"too old resource version","reason":"Expired","code":410}})"
       "\n"});
}

}  // namespace ctrl::testing
