// SPDX-License-Identifier: Apache-2.0
// Fuzzes HTTP/1.1 response framing as HttpTransport and HttpStream read it: Beast's parser fed
// through a read buffer with a maximum, as HttpConnection's is. Byte 0 picks the size of each read
// (as a socket returns data in pieces), byte 1 the buffer and body caps (scaled down so that short
// inputs reach them); the rest is what the server sends. Invariants: the buffer never grows past
// its cap however long a chunk extension, trailer or header is; a complete body never exceeds the
// body cap; reading always ends, with a message or an error, once the input is used up.
#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

// A SyncReadStream over the fuzz input: at most `piece` bytes per read, then end of file.
struct PieceStream {
  std::string_view data;
  std::size_t piece;

  template <class Buffers>
  std::size_t read_some(const Buffers& buffers, boost::system::error_code& ec) {
    if (data.empty()) {
      ec = asio::error::eof;
      return 0;
    }
    const std::size_t n =
        asio::buffer_copy(buffers, asio::buffer(data.data(), std::min(piece, data.size())));
    data.remove_prefix(n);
    ec = {};
    return n;
  }
  template <class Buffers>
  std::size_t read_some(const Buffers& buffers) {
    boost::system::error_code ec;
    const std::size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }
};

// HttpTransport::exchange: the whole response into a string, under a body limit.
void whole_response(std::string_view input, std::size_t piece, std::size_t buffer_cap,
                    std::size_t body_cap) {
  PieceStream stream{input, piece};
  beast::flat_buffer buffer(buffer_cap);
  http::response_parser<http::string_body> parser;
  parser.body_limit(body_cap);
  boost::system::error_code ec;
  http::read(stream, buffer, parser, ec);
  if (buffer.size() > buffer_cap) std::abort();
  if (!ec && (!parser.is_done() || parser.get().body().size() > body_cap)) std::abort();
}

// HttpStream::read_some: the body in pieces through a small buffer_body window, no body limit.
void streamed_response(std::string_view input, std::size_t piece, std::size_t buffer_cap) {
  PieceStream stream{input, piece};
  beast::flat_buffer buffer(buffer_cap);
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);
  boost::system::error_code ec;
  http::read_header(stream, buffer, parser, ec);
  if (ec) return;
  char window[97];
  // Each round either consumes input or ends; the input bounds the rounds.
  for (std::size_t rounds = 0; !parser.is_done(); ++rounds) {
    if (rounds > 4 * (input.size() + 8)) std::abort();
    parser.get().body().data = window;
    parser.get().body().size = sizeof window;
    http::read_some(stream, buffer, parser, ec);
    if (buffer.size() > buffer_cap) std::abort();
    if (ec == http::error::need_buffer) ec = {};
    if (ec) return;
  }
}

}  // namespace

// BOOST_ENABLE_ASSERT_HANDLER (test/fuzz/CMakeLists.txt): every Boost assert comes here.
namespace boost {
void assertion_failed(char const* expr, char const* function, char const* file, long line) {
  // Beast 1.81's parse_chunk_header asserts n >= 5 when "0\r\n" has arrived and one more byte of
  // the trailer section; 4 bytes are valid there and the code after it returns need_more. Beast
  // corrected the assert (boostorg/beast#2861); Debian 12 ships 1.81.
  if (std::string_view(expr) == "n >= 5" && std::string_view(file).ends_with("basic_parser.ipp")) {
    return;
  }
  std::fprintf(stderr, "Boost assertion failed: %s in %s (%s:%ld)\n", expr, function, file, line);
  std::abort();
}
void assertion_failed_msg(char const* expr, char const* msg, char const* function, char const* file,
                          long line) {
  std::fprintf(stderr, "Boost assertion failed: %s (%s) in %s (%s:%ld)\n", expr, msg, function,
               file, line);
  std::abort();
}
}  // namespace boost

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t piece = 1 + data[0] % 64;
  const std::size_t buffer_cap = 64 + std::size_t{data[1]} * 4;
  const std::size_t body_cap = std::size_t{data[1]} * 2;
  const std::string_view input(reinterpret_cast<const char*>(data) + 2, size - 2);
  whole_response(input, piece, buffer_cap, body_cap);
  streamed_response(input, piece, buffer_cap);
  return 0;
}
