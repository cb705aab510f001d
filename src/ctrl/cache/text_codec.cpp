// SPDX-License-Identifier: Apache-2.0
#include "ctrl/cache/text_codec.h"

#include <glog/logging.h>
#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <utility>

namespace ctrl {

namespace {

constexpr int kWindowBits = 12;  // 4 KiB: the dictionary and one object fit
static_assert(TextCodec::kWindow == std::size_t{1} << kWindowBits);
constexpr int kMemLevel = 6;  // 16 KiB of hash table; small inputs gain nothing from more
// Level 6 against 1 costs a few microseconds per object and saves about a fifth of its bytes.
constexpr int kLevel = Z_DEFAULT_COMPRESSION;

// One deflate and one inflate stream per thread, reset per call: initialising a stream allocates
// its tables, which would cost more than compressing a small object.
struct Streams {
  z_stream deflater{};
  z_stream inflater{};

  Streams() {
    CHECK_EQ(
        deflateInit2(&deflater, kLevel, Z_DEFLATED, -kWindowBits, kMemLevel, Z_DEFAULT_STRATEGY),
        Z_OK);
    CHECK_EQ(inflateInit2(&inflater, -kWindowBits), Z_OK);
  }
  ~Streams() {
    deflateEnd(&deflater);
    inflateEnd(&inflater);
  }
  Streams(const Streams&) = delete;
  Streams& operator=(const Streams&) = delete;
};

Streams& streams() {
  thread_local Streams s;
  return s;
}

Bytef* bytes(std::string_view s) {
  // zlib's next_in is not const-qualified but is only read.
  return reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
}

}  // namespace

TextCodec::TextCodec(std::string dictionary) : dictionary_(std::move(dictionary)) {
  // zlib uses only the dictionary's last window of bytes: keep no more (the first object a store
  // takes may be large, and the codec lives as long as the store).
  constexpr std::size_t kWindow = std::size_t{1} << kWindowBits;
  if (dictionary_.size() > kWindow) dictionary_.erase(0, dictionary_.size() - kWindow);
  dictionary_.shrink_to_fit();
}

std::string TextCodec::compress(std::string_view text) const {
  z_stream& z = streams().deflater;
  CHECK_EQ(deflateReset(&z), Z_OK);
  if (!dictionary_.empty()) {
    CHECK_EQ(deflateSetDictionary(&z, bytes(dictionary_), static_cast<uInt>(dictionary_.size())),
             Z_OK);
  }
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())), '\0');
  z.next_in = bytes(text);
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  // deflateBound's room always suffices for one Z_FINISH call.
  CHECK_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(out.size() - z.avail_out);
  out.shrink_to_fit();  // kept for the object's life: no slack
  return out;
}

void TextCodec::decompress(std::string_view data, std::string& out) const {
  z_stream& z = streams().inflater;
  CHECK_EQ(inflateReset(&z), Z_OK);
  if (!dictionary_.empty()) {
    // Raw inflate takes the dictionary up front (no header announces it).
    CHECK_EQ(inflateSetDictionary(&z, bytes(dictionary_), static_cast<uInt>(dictionary_.size())),
             Z_OK);
  }
  out.clear();
  z.next_in = bytes(data);
  z.avail_in = static_cast<uInt>(data.size());
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    const std::size_t used = out.size();
    out.resize(used + std::max<std::size_t>(data.size() * 8, 1024));
    z.next_out = reinterpret_cast<Bytef*>(out.data() + used);
    z.avail_out = static_cast<uInt>(out.size() - used);
    rc = inflate(&z, Z_NO_FLUSH);
    CHECK(rc == Z_OK || rc == Z_STREAM_END) << "cached object text does not inflate: " << rc;
    out.resize(out.size() - z.avail_out);
  }
}

std::string TextCodec::decompress(std::string_view data) const {
  std::string out;
  decompress(data, out);
  return out;
}

}  // namespace ctrl
