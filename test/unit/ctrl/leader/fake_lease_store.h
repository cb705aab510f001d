// SPDX-License-Identifier: Apache-2.0
#pragma once

// A fake API server's handling of one Lease (ns/lock) with the API server's optimistic
// concurrency, shared by the leader elector and manager tests.

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <boost/beast/http/verb.hpp>
#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "ctrl/leader/leader_election_record.h"
#include "support/fake_api_server.h"

namespace ctrl::testing {

using Reply = kube::testing::FakeApiServer::Reply;
namespace http = boost::beast::http;

inline const std::string kLeasePath = "/apis/coordination.k8s.io/v1/namespaces/ns/leases/lock";
inline const std::string kCollectionPath = "/apis/coordination.k8s.io/v1/namespaces/ns/leases";

inline std::string to_json(const rapidjson::Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return {buffer.GetString(), buffer.GetSize()};
}

inline std::string status(int code, const std::string& reason) {
  return R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":")" + reason +
         R"(","code":)" + std::to_string(code) + "}";
}

// The API server's optimistic concurrency for one Lease: create fails if it exists, update fails
// unless metadata.resourceVersion is the current one.
struct FakeLeaseStore {
  std::optional<rapidjson::Document> lease;
  int resource_version = 0;
  bool hang = false;
  int writes = 0;

  Reply handle(const kube::testing::FakeApiServer::Request& req) {
    if (hang) return Reply::of(Reply::Kind::hang);
    const std::string path = req.target.substr(0, req.target.find('?'));
    if (req.method == http::verb::get && path == kLeasePath) {
      if (!lease) return Reply::json(404, status(404, "NotFound"));
      return Reply::json(200, to_json(*lease));
    }
    if (req.method == http::verb::post && path == kCollectionPath) {
      if (lease) return Reply::json(409, status(409, "AlreadyExists"));
      return store(req.body, 201);
    }
    if (req.method == http::verb::put && path == kLeasePath) {
      if (!lease) return Reply::json(404, status(404, "NotFound"));
      rapidjson::Document body;
      body.Parse(req.body.c_str());
      REQUIRE_FALSE(body.HasParseError());
      const auto& meta = body["metadata"];
      // PUT without a resourceVersion would be an unconditional overwrite: refuse it loudly.
      REQUIRE(meta.HasMember("resourceVersion"));
      if (std::string(meta["resourceVersion"].GetString()) != std::to_string(resource_version)) {
        return Reply::json(409, status(409, "Conflict"));
      }
      return store(req.body, 200);
    }
    return Reply::json(400, status(400, "BadRequest"));
  }

  Reply store(const std::string& text, int code) {
    rapidjson::Document doc;
    doc.Parse(text.c_str());
    REQUIRE_FALSE(doc.HasParseError());
    ++resource_version;
    ++writes;
    auto& meta = doc["metadata"];
    meta.RemoveMember("resourceVersion");
    meta.AddMember("resourceVersion",
                   rapidjson::Value(std::to_string(resource_version), doc.GetAllocator()),
                   doc.GetAllocator());
    lease.emplace();
    lease->CopyFrom(doc, lease->GetAllocator());
    return Reply::json(code, to_json(doc));
  }

  ctrl::LeaderElectionRecord record() const {
    REQUIRE(lease);
    return ctrl::LeaderElectionRecord::from_lease(*lease);
  }
};

}  // namespace ctrl::testing
