// SPDX-License-Identifier: Apache-2.0
#include "kube/http/transport_error.h"

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <string>
#include <system_error>

#include "kube/http/http_connection.h"

namespace kube {

ApiError transport_error(const boost::system::error_code& ec, std::string_view what) {
  if (ec == boost::beast::error::timeout) {
    ApiError e = api_error_from_transport(std::make_error_code(std::errc::timed_out), what);
    e.code = make_error_code(Errc::timeout);
    return e;
  }
  if (ec == boost::beast::http::error::buffer_overflow) {
    return api_error_from_transport(
        static_cast<std::error_code>(ec),
        std::string(what) +
            ": framing (a chunk header with extensions, or trailers) longer than the " +
            std::to_string(HttpConnection::kMaxReadBufferBytes / 1024) + " KiB read buffer");
  }
  return api_error_from_transport(static_cast<std::error_code>(ec), what);
}

}  // namespace kube
