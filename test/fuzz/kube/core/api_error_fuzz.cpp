// SPDX-License-Identifier: Apache-2.0
// Fuzzes api_error_from_response on arbitrary bodies and Retry-After headers. Input: bytes 0-1 the
// HTTP status (0..999), byte 2 the header length, then the header, then the body.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kube/core/api_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const int status = ((data[0] << 8) | data[1]) % 1000;
  std::string_view rest(reinterpret_cast<const char*>(data) + 3, size - 3);
  const std::size_t header_size = std::min<std::size_t>(data[2] % 32, rest.size());
  const std::string_view header = rest.substr(0, header_size);
  const std::string_view body = rest.substr(header_size);

  const kube::ApiError error = kube::api_error_from_response(status, body, header);
  if (error.code.category() != kube::api_category()) std::abort();
  if (error.http_status != status && status != 0) std::abort();
  if (error.message.size() > kube::kMaxErrorMessageBytes) std::abort();
  if (error.causes.size() > kube::kMaxStatusCauses) std::abort();
  if (error.retry_after && error.retry_after->count() < 0) std::abort();
  // The kind must agree with the documented mapping from status and reason.
  if (error.code != kube::make_error_code(kube::errc_from_status(status, error.reason)) &&
      status != 0) {
    std::abort();
  }
  const std::string line = error.describe();
  if (line.size() > kube::kMaxDescribeBytes || line.find('\n') != std::string::npos) std::abort();

  const std::string excerpt = kube::one_line_excerpt(body, data[2]);
  if (excerpt.size() > data[2]) std::abort();
  return 0;
}
