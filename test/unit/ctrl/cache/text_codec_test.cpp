// SPDX-License-Identifier: Apache-2.0
#include "ctrl/cache/text_codec.h"

#include <catch2/catch.hpp>
#include <string>

using ctrl::TextCodec;

namespace {

// A Deployment as the cache keeps it, with what differs between two objects of one AppService
// each filled in.
std::string deployment(int i) {
  const std::string n = std::to_string(i);
  return R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"app-)" + n +
         R"(","namespace":"bench","uid":"5b1c3a2e-0f4d-4c8a-9e7b-)" + std::to_string(100000 + i) +
         R"(00000","resourceVersion":")" + std::to_string(52000 + 7 * i) +
         R"(","generation":1,"creationTimestamp":"2026-12-03T13:2)" + std::to_string(i % 10) +
         R"(:07Z","labels":{"app.kubernetes.io/managed-by":"appservice-operator",)"
         R"("app.example.com/appservice":"app-)" +
         n + R"("},"annotations":{"app.example.com/spec-hash":")" + std::to_string(i * 7919) +
         R"("},"ownerReferences":[{"apiVersion":"app.example.com/v1","kind":"AppService",)"
         R"("name":"app-)" +
         n + R"(","uid":"0a1b2c3d-4e5f-4a6b-8c7d-)" + std::to_string(200000 + i) +
         R"(00000","controller":true,"blockOwnerDeletion":true}]},"spec":{"replicas":1,)"
         R"("selector":{"matchLabels":{"app.example.com/appservice":"app-)" +
         n + R"("}},"template":{"metadata":{"labels":{"app.example.com/appservice":"app-)" + n +
         R"("}},"spec":{"containers":[{"name":"app","image":"nginx:1.27","ports":[)"
         R"({"name":"http","containerPort":80,"protocol":"TCP"}]}]}}},"status":{)"
         R"("observedGeneration":1,"replicas":1,"readyReplicas":1,"availableReplicas":1,)"
         R"("conditions":[{"type":"Available","status":"True","reason":"MinimumReplicasAvailable"},)"
         R"({"type":"Progressing","status":"True","reason":"NewReplicaSetAvailable"}]}})";
}

}  // namespace

TEST_CASE("text codec: what goes in comes out, with and without a dictionary", "[store]") {
  std::string big;
  for (int i = 0; i < 40; ++i) big += deployment(i);  // past the 4 KiB window
  const std::string utf8 = "{\"message\":\"caf\xc3\xa9 \xe2\x9c\x93\"}";
  for (const std::string& dictionary : {std::string(), deployment(1), big}) {
    const TextCodec codec(dictionary);
    for (const std::string& text : {std::string(), deployment(2), big, utf8}) {
      CHECK(codec.decompress(codec.compress(text)) == text);
    }
  }
}

TEST_CASE("text codec: keeps only the window of the dictionary that zlib reads", "[store]") {
  std::string big;
  for (int i = 0; i < 40; ++i) big += deployment(i);
  const TextCodec whole(big);
  CHECK(whole.dictionary().size() == 4096);
  CHECK(big.ends_with(whole.dictionary()));
  const std::string text = deployment(41);
  const std::string packed = whole.compress(text);
  CHECK(packed.size() * 4 < text.size());  // the tail still holds objects like this one
  CHECK(whole.decompress(packed) == text);
}

TEST_CASE("text codec: a reader's buffer is cleared and reused", "[store]") {
  const TextCodec codec(deployment(0));
  std::string out = "left over";
  codec.decompress(codec.compress(deployment(3)), out);
  CHECK(out == deployment(3));
  codec.decompress(codec.compress("{}"), out);
  CHECK(out == "{}");
}

TEST_CASE("text codec: an object of the dictionary's kind keeps mostly what is its own",
          "[store]") {
  const std::string text = deployment(42);
  const std::size_t with = TextCodec(deployment(7)).compress(text).size();
  const std::size_t without = TextCodec("").compress(text).size();
  INFO("text " << text.size() << " bytes, deflated " << without << ", against a dictionary "
               << with);
  CHECK(without < text.size());
  CHECK(with * 3 < without);
  CHECK(with * 8 < text.size());
}
