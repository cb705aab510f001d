// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kube/watch/watch_event.h"

namespace kube {

// A line of a watch stream that is not a usable event. The decoder skips it and goes on; whether
// to keep watching is the caller's call (client-go restarts the watch).
struct WatchDecodeError {
  enum class Kind {
    malformed_json,  // not JSON, invalid UTF-8, or nested deeper than kMaxJsonDepth
    invalid_event,   // JSON, but not {"type": string, "object": {...}}, or a BOOKMARK without RV
    unknown_type,    // a "type" other than ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
    line_too_long,   // longer than max_line_bytes; its bytes are dropped up to the next newline
  };
  Kind kind = Kind::malformed_json;
  std::uint64_t line = 0;  // 1-based line number in the stream
  std::string message;     // one line, bounded, with an excerpt of the offending line
};

// Turns the body of a watch response into events. The API server writes one JSON object per line;
// HTTP chunks do not line up with lines, so bytes are buffered until a newline completes a line.
// Pure and I/O-free: the same bytes give the same items however they are split across feed()
// calls. Errors are values; a bad line never affects the lines after it. Memory is bounded by
// max_line_bytes (plus the event being decoded).
class WatchDecoder {
 public:
  // etcd refuses objects over ~1.5 MiB, so a longer event is not a Kubernetes object; 16 MiB keeps
  // the line and its parsed copy well inside deploy/base's 128 MiB memory limit.
  static constexpr std::size_t kDefaultMaxLineBytes = 16u << 20;
  // Go's encoding/json refuses deeper nesting than 10000; real objects stay far below this, and a
  // bound keeps recursive consumers (writers, copies) of a decoded object off the stack limit.
  static constexpr int kMaxJsonDepth = 1000;

  using Item = std::variant<WatchEvent, WatchDecodeError>;

  explicit WatchDecoder(std::size_t max_line_bytes = kDefaultMaxLineBytes);

  // Appends bytes and returns the items of the lines they complete, in stream order. Lines end in
  // "\n" or "\r\n"; blank lines are skipped.
  std::vector<Item> feed(std::string_view bytes);

  // End of stream: decodes a last line that has no newline, then resets the decoder for a new
  // stream (line numbers start again at 1).
  std::vector<Item> finish();

  // Bytes of an incomplete line held back (for metrics and tests).
  std::size_t buffered_bytes() const { return buffer_.size(); }
  std::size_t max_line_bytes() const { return max_line_bytes_; }

 private:
  void take_line(std::string_view line, std::vector<Item>& out) const;
  WatchDecodeError too_long(std::uint64_t line) const;

  std::size_t max_line_bytes_;
  std::string buffer_;       // the incomplete current line; never holds a '\n'
  bool discarding_ = false;  // inside an over-long line already reported: drop up to its '\n'
  std::uint64_t line_ = 0;   // lines completed so far
};

}  // namespace kube
