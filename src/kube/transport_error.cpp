#include "kube/transport_error.h"

#include <boost/beast/core/error.hpp>
#include <string>
#include <system_error>

namespace kube {

ApiError transport_error(const boost::system::error_code& ec, std::string_view what) {
  if (ec == boost::beast::error::timeout) {
    ApiError e = api_error_from_transport(std::make_error_code(std::errc::timed_out), what);
    e.code = make_error_code(Errc::timeout);
    return e;
  }
  return api_error_from_transport(static_cast<std::error_code>(ec), what);
}

}  // namespace kube
