// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <utility>

namespace kube {

// A request body: JSON text as given, or a RapidJSON value serialized once on construction, so REST
// verbs take either without an overload per verb.
struct JsonBody {
  JsonBody(std::string json) : text(std::move(json)) {}
  JsonBody(const char* json) : text(json) {}
  JsonBody(const rapidjson::Value& value) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    value.Accept(writer);
    text.assign(buffer.GetString(), buffer.GetSize());
  }

  std::string text;
};

}  // namespace kube
