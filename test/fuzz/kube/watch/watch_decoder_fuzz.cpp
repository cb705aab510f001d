// SPDX-License-Identifier: Apache-2.0
// Fuzzes WatchDecoder framing and event decoding. Input: byte 0 picks a split position, byte 1 a
// line length limit, the rest is the stream. Besides crashes and sanitizer reports, it checks the
// framing invariant: whole, split-in-two and byte-at-a-time feeding give the same items.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "kube/watch/watch_decoder.h"

namespace {

struct Digest {
  int kind;  // 0..4 event types, 10+ decode error kinds
  std::uint64_t line;
  std::string resource_version;
  int error_code;
  bool operator==(const Digest&) const = default;
};

Digest digest(const kube::WatchDecoder::Item& item) {
  if (const auto* error = std::get_if<kube::WatchDecodeError>(&item)) {
    if (error->line == 0 || error->message.size() > 1024) std::abort();
    return {10 + static_cast<int>(error->kind), error->line, {}, 0};
  }
  const auto& event = std::get<kube::WatchEvent>(item);
  if (!event.object || !event.object->IsObject()) std::abort();
  if (event.error.has_value() != (event.type == kube::WatchEvent::Type::error)) std::abort();
  if (event.type == kube::WatchEvent::Type::bookmark && event.resource_version.empty()) {
    std::abort();
  }
  int code = 0;
  if (event.error) {
    code = event.error->code.value();
    if (event.error->describe().size() > kube::kMaxDescribeBytes) std::abort();
  }
  return {static_cast<int>(event.type), 0, event.resource_version, code};
}

std::vector<Digest> decode(std::string_view stream, std::size_t max_line,
                           const std::vector<std::size_t>& cuts) {
  kube::WatchDecoder decoder(max_line);
  std::vector<Digest> out;
  std::size_t begin = 0;
  const auto take = [&](const std::vector<kube::WatchDecoder::Item>& items) {
    for (const auto& item : items) out.push_back(digest(item));
  };
  for (const std::size_t cut : cuts) {
    take(decoder.feed(stream.substr(begin, cut - begin)));
    if (decoder.buffered_bytes() > max_line + 1) std::abort();
    begin = cut;
  }
  take(decoder.feed(stream.substr(begin)));
  take(decoder.finish());
  if (decoder.buffered_bytes() != 0) std::abort();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 2, size - 2);
  const std::size_t split = stream.empty() ? 0 : data[0] % (stream.size() + 1);
  // 0 means the production default; otherwise small limits so the long-line path gets exercised.
  const std::size_t max_line = data[1] == 0 ? kube::WatchDecoder::kDefaultMaxLineBytes : data[1];

  const auto whole = decode(stream, max_line, {});
  const auto split_two = decode(stream, max_line, {split});
  std::vector<std::size_t> every_byte;
  for (std::size_t i = 1; i < stream.size(); ++i) every_byte.push_back(i);
  const auto bytewise = decode(stream, max_line, every_byte);
  if (whole != split_two || whole != bytewise) {
    std::fprintf(stderr, "framing mismatch: whole %zu items, split at %zu %zu, bytewise %zu\n",
                 whole.size(), split, split_two.size(), bytewise.size());
    std::abort();
  }
  return 0;
}
