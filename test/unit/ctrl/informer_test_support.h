#pragma once

#include <rapidjson/document.h>

#include <memory>
#include <string>

#include "ctrl/informer_state.h"

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

}  // namespace ctrl::testing
