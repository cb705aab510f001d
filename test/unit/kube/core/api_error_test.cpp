// SPDX-License-Identifier: Apache-2.0
#include "kube/core/api_error.h"

#include <rapidjson/document.h>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/system/error_code.hpp>
#include <catch2/catch.hpp>
#include <string>

using kube::ApiError;
using kube::Errc;

namespace {

// A Status as kube-apiserver writes it.
std::string status_body(int code, std::string_view reason, std::string_view message,
                        std::string_view details = "") {
  std::string body = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)";
  body += R"("message":")" + std::string(message) + R"(","reason":")" + std::string(reason) + "\"";
  if (!details.empty()) body += R"(,"details":)" + std::string(details);
  body += R"(,"code":)" + std::to_string(code) + "}";
  return body;
}

}  // namespace

TEST_CASE("errc_from_status maps every HTTP status like client-go", "[api_error]") {
  CHECK(kube::errc_from_status(400) == Errc::bad_request);
  CHECK(kube::errc_from_status(401) == Errc::unauthorized);
  CHECK(kube::errc_from_status(403) == Errc::forbidden);
  CHECK(kube::errc_from_status(404) == Errc::not_found);
  CHECK(kube::errc_from_status(405) == Errc::method_not_allowed);
  CHECK(kube::errc_from_status(409) == Errc::conflict);
  CHECK(kube::errc_from_status(410) == Errc::gone);
  CHECK(kube::errc_from_status(413) == Errc::request_entity_too_large);
  CHECK(kube::errc_from_status(415) == Errc::unsupported_media_type);
  CHECK(kube::errc_from_status(422) == Errc::invalid);
  CHECK(kube::errc_from_status(429) == Errc::too_many_requests);
  CHECK(kube::errc_from_status(500) == Errc::internal);
  CHECK(kube::errc_from_status(502) == Errc::unavailable);
  CHECK(kube::errc_from_status(503) == Errc::unavailable);
  CHECK(kube::errc_from_status(504) == Errc::timeout);
  CHECK(kube::errc_from_status(501) == Errc::internal);
  CHECK(kube::errc_from_status(599) == Errc::internal);
  CHECK(kube::errc_from_status(0) == Errc::unknown);
  CHECK(kube::errc_from_status(200) == Errc::unknown);
  CHECK(kube::errc_from_status(302) == Errc::unknown);
  CHECK(kube::errc_from_status(406) == Errc::unknown);
  CHECK(kube::errc_from_status(418) == Errc::unknown);
}

TEST_CASE("errc_from_status lets a known reason refine the code", "[api_error]") {
  CHECK(kube::errc_from_status(409, "AlreadyExists") == Errc::already_exists);
  CHECK(kube::errc_from_status(409, "Conflict") == Errc::conflict);
  CHECK(kube::errc_from_status(410, "Expired") == Errc::gone);
  CHECK(kube::errc_from_status(410, "Gone") == Errc::gone);
  CHECK(kube::errc_from_status(0, "Expired") == Errc::gone);
  CHECK(kube::errc_from_status(500, "ServerTimeout") == Errc::timeout);
  CHECK(kube::errc_from_status(504, "Timeout") == Errc::timeout);
  CHECK(kube::errc_from_status(500, "Timeout") == Errc::timeout);
  CHECK(kube::errc_from_status(503, "ServiceUnavailable") == Errc::unavailable);
  CHECK(kube::errc_from_status(500, "InternalError") == Errc::internal);
  CHECK(kube::errc_from_status(429, "TooManyRequests") == Errc::too_many_requests);
  CHECK(kube::errc_from_status(422, "Invalid") == Errc::invalid);
  // Unknown or empty reasons fall back to the code, as client-go's knownReasons check does.
  CHECK(kube::errc_from_status(404, "SomethingNew") == Errc::not_found);
  CHECK(kube::errc_from_status(404, "") == Errc::not_found);
  CHECK(kube::errc_from_status(406, "NotAcceptable") == Errc::unknown);
  // Reasons are case-sensitive like Go's constants.
  CHECK(kube::errc_from_status(409, "alreadyexists") == Errc::conflict);
}

TEST_CASE("api_error_from_response parses apiserver Status bodies", "[api_error]") {
  SECTION("404 NotFound") {
    const ApiError e = kube::api_error_from_response(
        404, status_body(404, "NotFound", R"(deployments.apps \"web\" not found)",
                         R"({"name":"web","group":"apps","kind":"deployments"})"));
    CHECK(e.is(Errc::not_found));
    CHECK(e.http_status == 404);
    CHECK(e.reason == "NotFound");
    CHECK(e.message == "deployments.apps \"web\" not found");
    CHECK(e.causes.empty());
    CHECK_FALSE(e.retry_after.has_value());
    CHECK(e.describe() == "NotFound (404): deployments.apps \"web\" not found");
  }
  SECTION("409 AlreadyExists and 409 Conflict") {
    const ApiError exists = kube::api_error_from_response(
        409, status_body(409, "AlreadyExists", R"(services \"web\" already exists)"));
    CHECK(exists.is(Errc::already_exists));
    CHECK_FALSE(exists.is(Errc::conflict));
    const ApiError conflict = kube::api_error_from_response(
        409, status_body(409, "Conflict",
                         "Operation cannot be fulfilled on appservices.app.example.com "
                         R"(\"web\": the object has been modified)"));
    CHECK(conflict.is(Errc::conflict));
    CHECK(conflict.reason == "Conflict");
  }
  SECTION("410 Expired from a stale continue token") {
    const ApiError e = kube::api_error_from_response(
        410, status_body(410, "Expired",
                         "The provided continue parameter is too old to display a consistent "
                         "list result."));
    CHECK(e.is(Errc::gone));
    CHECK(e.reason == "Expired");
  }
  SECTION("401, 403, 400, 405, 413, 415, 500, 503, 504") {
    CHECK(kube::api_error_from_response(401, status_body(401, "Unauthorized", "Unauthorized"))
              .is(Errc::unauthorized));
    const ApiError forbidden = kube::api_error_from_response(
        403, status_body(403, "Forbidden",
                         R"(deployments.apps is forbidden: User \"system:serviceaccount:x:y\" )"
                         R"(cannot list resource \"deployments\")"));
    CHECK(forbidden.is(Errc::forbidden));
    CHECK(forbidden.message.find("cannot list resource") != std::string::npos);
    CHECK(kube::api_error_from_response(400, status_body(400, "BadRequest", "bad"))
              .is(Errc::bad_request));
    CHECK(kube::api_error_from_response(405, status_body(405, "MethodNotAllowed", "no"))
              .is(Errc::method_not_allowed));
    CHECK(kube::api_error_from_response(413, status_body(413, "RequestEntityTooLarge", "big"))
              .is(Errc::request_entity_too_large));
    CHECK(kube::api_error_from_response(415, status_body(415, "UnsupportedMediaType", "yaml?"))
              .is(Errc::unsupported_media_type));
    CHECK(kube::api_error_from_response(500, status_body(500, "InternalError", "etcd down"))
              .is(Errc::internal));
    CHECK(kube::api_error_from_response(503, status_body(503, "ServiceUnavailable", "later"))
              .is(Errc::unavailable));
    CHECK(
        kube::api_error_from_response(504, status_body(504, "Timeout", "slow")).is(Errc::timeout));
    CHECK(kube::api_error_from_response(500, status_body(500, "ServerTimeout", "slow"))
              .is(Errc::timeout));
  }
  SECTION("422 Invalid keeps the field causes") {
    const ApiError e = kube::api_error_from_response(
        422,
        status_body(422, "Invalid",
                    R"(AppService.app.example.com \"web\" is invalid: spec.size: Invalid value)",
                    R"({"name":"web","group":"app.example.com","kind":"AppService","causes":[)"
                    R"({"reason":"FieldValueInvalid","message":"Invalid value: -1: must be >= 0",)"
                    R"("field":"spec.size"},)"
                    R"({"reason":"FieldValueRequired","message":"Required value",)"
                    R"("field":"spec.image"},)"
                    R"({"reason":"FieldValueForbidden"},"not an object"]})"));
    CHECK(e.is(Errc::invalid));
    REQUIRE(e.causes.size() == 3);
    CHECK(e.causes[0].type == "FieldValueInvalid");
    CHECK(e.causes[0].message == "Invalid value: -1: must be >= 0");
    CHECK(e.causes[0].field == "spec.size");
    CHECK(e.causes[1].type == "FieldValueRequired");
    CHECK(e.causes[1].field == "spec.image");
    CHECK(e.causes[2].type == "FieldValueForbidden");
    CHECK(e.causes[2].field.empty());
    CHECK(e.describe() ==
          "Invalid (422): AppService.app.example.com \"web\" is invalid: spec.size: Invalid value "
          "[spec.size: Invalid value: -1: must be >= 0; spec.image: Required value; "
          "FieldValueForbidden]");
  }
  SECTION("the wire status decides when Status.code disagrees") {
    const ApiError e =
        kube::api_error_from_response(503, status_body(404, "", "proxied from somewhere"));
    CHECK(e.is(Errc::unavailable));
    CHECK(e.http_status == 503);
    CHECK(e.reason == "ServiceUnavailable");
  }
}

TEST_CASE("Retry-After comes from the header or from details.retryAfterSeconds", "[api_error]") {
  const std::string body =
      status_body(429, "TooManyRequests", "Too many requests, please try again later.",
                  R"({"retryAfterSeconds":3})");
  SECTION("details only") {
    const ApiError e = kube::api_error_from_response(429, body);
    CHECK(e.is(Errc::too_many_requests));
    REQUIRE(e.retry_after.has_value());
    CHECK(*e.retry_after == std::chrono::seconds(3));
  }
  SECTION("header only, empty body") {
    const ApiError e = kube::api_error_from_response(429, "", "7");
    CHECK(e.is(Errc::too_many_requests));
    REQUIRE(e.retry_after.has_value());
    CHECK(*e.retry_after == std::chrono::seconds(7));
    CHECK(e.reason == "TooManyRequests");
    CHECK_FALSE(e.message.empty());
  }
  SECTION("header wins over details") {
    const ApiError e = kube::api_error_from_response(429, body, " 11 ");
    REQUIRE(e.retry_after.has_value());
    CHECK(*e.retry_after == std::chrono::seconds(11));
  }
  SECTION("a header of 0 means retry now") {
    const ApiError e = kube::api_error_from_response(503, "", "0");
    REQUIRE(e.retry_after.has_value());
    CHECK(*e.retry_after == std::chrono::seconds(0));
  }
  SECTION("unparsable headers fall back to details") {
    for (const char* header : {"abc", "-1", "+1", "1.5", "Wed, 21 Oct 2015 07:28:00 GMT",
                               "99999999999999999999", "5s"}) {
      CAPTURE(header);
      const ApiError e = kube::api_error_from_response(429, body, header);
      REQUIRE(e.retry_after.has_value());
      CHECK(*e.retry_after == std::chrono::seconds(3));
      CHECK_FALSE(kube::api_error_from_response(429, "", header).retry_after.has_value());
    }
  }
  SECTION("non-positive or non-integer retryAfterSeconds is no suggestion") {
    CHECK_FALSE(kube::api_error_from_response(
                    429, status_body(429, "TooManyRequests", "x", R"({"retryAfterSeconds":0})"))
                    .retry_after.has_value());
    CHECK_FALSE(kube::api_error_from_response(
                    429, status_body(429, "TooManyRequests", "x", R"({"retryAfterSeconds":-4})"))
                    .retry_after.has_value());
    CHECK_FALSE(kube::api_error_from_response(
                    429, status_body(429, "TooManyRequests", "x", R"({"retryAfterSeconds":"4"})"))
                    .retry_after.has_value());
  }
}

TEST_CASE("garbage bodies never crash and leave a bounded one-line message", "[api_error]") {
  SECTION("HTML from a proxy") {
    const ApiError e = kube::api_error_from_response(
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\n<center><h1>502 "
        "Bad Gateway</h1></center>\n</body>\n</html>\n");
    CHECK(e.is(Errc::unavailable));
    CHECK(e.reason == "ServiceUnavailable");
    CHECK(e.message ==
          "<html> <head><title>502 Bad Gateway</title></head> <body> <center><h1>502 Bad "
          "Gateway</h1></center> </body> </html>");
    CHECK(e.describe().find('\n') == std::string::npos);
  }
  SECTION("empty body gets client-go's generic message") {
    const ApiError e = kube::api_error_from_response(404, "");
    CHECK(e.is(Errc::not_found));
    CHECK(e.reason == "NotFound");
    CHECK(e.message == "the server could not find the requested resource");
  }
  SECTION("truncated Status") {
    const ApiError e =
        kube::api_error_from_response(409, R"({"kind":"Status","reason":"AlreadyEx)");
    CHECK(e.is(Errc::conflict));
    CHECK(e.message == R"({"kind":"Status","reason":"AlreadyEx)");
  }
  SECTION("JSON that is not a Status") {
    CHECK(kube::api_error_from_response(500, "[1,2,3]").message == "[1,2,3]");
    const ApiError other = kube::api_error_from_response(403, R"({"kind":"Pod","reason":"Gone"})");
    CHECK(other.is(Errc::forbidden));  // a Pod's fields are not a Status reason
    CHECK(other.message == R"({"kind":"Pod","reason":"Gone"})");
    // Without a kind, reason and message are taken as a Status (some aggregated servers do this).
    const ApiError kindless = kube::api_error_from_response(500, R"({"reason":"Expired"})");
    CHECK(kindless.is(Errc::gone));
    // Fields of the wrong JSON type are ignored.
    const ApiError wrong = kube::api_error_from_response(
        422, R"({"kind":"Status","reason":7,"message":[],"code":"x","details":{"causes":{}}})");
    CHECK(wrong.is(Errc::invalid));
    CHECK(wrong.reason == "Invalid");
    CHECK(wrong.causes.empty());
  }
  SECTION("binary, NULs and invalid UTF-8") {
    constexpr char raw[] = "ok\0\x01\xff\xfe caf\xc3\xa9 \xe2\x82";
    const std::string body(raw, sizeof raw - 1);
    const ApiError e = kube::api_error_from_response(500, body);
    CHECK(e.is(Errc::internal));
    CHECK(e.message == "ok ?? caf\xc3\xa9 ??");
  }
  SECTION("huge bodies are cut") {
    const ApiError e = kube::api_error_from_response(500, std::string(1 << 20, 'x'));
    CHECK(e.message.size() <= kube::kMaxBodyExcerptBytes);
    CHECK(e.message.ends_with("..."));
    std::string status = status_body(500, "InternalError", std::string(100000, 'm'));
    const ApiError big = kube::api_error_from_response(500, status);
    CHECK(big.message.size() <= kube::kMaxErrorMessageBytes);
    CHECK(big.describe().size() <= kube::kMaxDescribeBytes);
  }
  SECTION("deep nesting does not exhaust the stack") {
    const ApiError e = kube::api_error_from_response(400, std::string(1 << 20, '['));
    CHECK(e.is(Errc::bad_request));
    CHECK(e.message.size() <= kube::kMaxBodyExcerptBytes);
  }
  SECTION("many causes are capped and describe stays bounded") {
    std::string causes = R"({"causes":[)";
    for (int i = 0; i < 1000; ++i) {
      if (i != 0) causes += ",";
      causes +=
          R"({"reason":"FieldValueInvalid","message":"bad value for this environment variable name","field":"spec.envs[)" +
          std::to_string(i) + R"(].name"})";
    }
    causes += "]}";
    const ApiError e = kube::api_error_from_response(422, status_body(422, "Invalid", "x", causes));
    CHECK(e.causes.size() == kube::kMaxStatusCauses);
    const std::string line = e.describe();
    CHECK(line.size() <= kube::kMaxDescribeBytes);
    CHECK(line.ends_with("..."));
  }
}

TEST_CASE("api_error_from_status reads a decoded Status, e.g. a watch ERROR", "[api_error]") {
  rapidjson::Document status;
  status.Parse(
      R"j({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)j"
      R"j("message":"too old resource version: 1 (2049)","reason":"Expired","code":410})j");
  REQUIRE_FALSE(status.HasParseError());
  const ApiError e = kube::api_error_from_status(status);
  CHECK(e.is(Errc::gone));
  CHECK(e.http_status == 410);
  CHECK(e.message == "too old resource version: 1 (2049)");
  // Same kind and texts as the HTTP 410 carrying the same body.
  const ApiError http = kube::api_error_from_response(
      410, R"j({"kind":"Status","message":"too old resource version: 1 (2049)",)j"
           R"j("reason":"Expired","code":410})j");
  CHECK(http.code == e.code);
  CHECK(http.describe() == e.describe());

  rapidjson::Document no_code;
  no_code.Parse(R"({"kind":"Status","message":"x"})");
  CHECK(kube::api_error_from_status(no_code, 500).is(Errc::internal));
  CHECK(kube::api_error_from_status(no_code).is(Errc::unknown));
  rapidjson::Document not_object;
  not_object.Parse("42");
  CHECK(kube::api_error_from_status(not_object, 503).is(Errc::unavailable));
}

TEST_CASE("Errc is a std::error_code category named kube", "[api_error]") {
  const std::error_code gone = Errc::gone;  // implicit, through is_error_code_enum
  CHECK(gone.category() == kube::api_category());
  CHECK(std::string(gone.category().name()) == "kube");
  CHECK(gone == Errc::gone);
  CHECK(gone != Errc::not_found);
  CHECK(gone == kube::make_error_code(Errc::gone));
  CHECK(gone.value() == static_cast<int>(Errc::gone));
  CHECK(gone.message() == "gone");
  CHECK(kube::make_error_code(Errc::not_found).message() == "not found");
  CHECK(std::error_code(999, kube::api_category()).message() == "unrecognized kube error");
  // Not confused with a generic code of the same value.
  CHECK(std::error_code(static_cast<int>(Errc::gone), std::generic_category()) != Errc::gone);
  CHECK(kube::default_reason(Errc::already_exists) == "AlreadyExists");
  CHECK(kube::default_reason(Errc::unknown).empty());
  ApiError e;
  e.code = Errc::conflict;
  CHECK(e.is(Errc::conflict));
  CHECK_FALSE(e.is(Errc::already_exists));
}

TEST_CASE("api_error_from_transport classifies Asio and Beast failures", "[api_error]") {
  const auto from = [](boost::system::error_code ec) {
    return kube::api_error_from_transport(ec, "GET https://10.0.0.1:6443/api/v1/pods");
  };
  const ApiError timed_out = from(boost::asio::error::timed_out);
  CHECK(timed_out.is(Errc::timeout));
  CHECK(timed_out.http_status == 0);
  CHECK(timed_out.message ==
        "GET https://10.0.0.1:6443/api/v1/pods: " +
            boost::system::error_code(boost::asio::error::timed_out).message());
  CHECK(from(boost::beast::error::timeout).is(Errc::timeout));
  CHECK(kube::api_error_from_transport(std::make_error_code(std::errc::timed_out), "x")
            .is(Errc::timeout));

  const ApiError refused = from(boost::asio::error::connection_refused);
  CHECK(refused.is(Errc::unavailable));
  CHECK(refused.describe() ==
        "unavailable: GET https://10.0.0.1:6443/api/v1/pods: " +
            std::error_code(boost::system::error_code(boost::asio::error::connection_refused))
                .message());
  CHECK(from(boost::asio::error::eof).is(Errc::unavailable));
  CHECK(from(boost::asio::error::connection_reset).is(Errc::unavailable));
  CHECK(from(boost::asio::ssl::error::stream_truncated).is(Errc::unavailable));
  CHECK(from(boost::asio::error::host_not_found).is(Errc::unavailable));
  // An already classified code passes through.
  CHECK(kube::api_error_from_transport(Errc::timeout, "retry").is(Errc::timeout));
}

TEST_CASE("one_line_excerpt keeps text on one line and cuts at a character", "[api_error]") {
  CHECK(kube::one_line_excerpt("  a\r\n\tb  c \n", 100) == "a b c");
  CHECK(kube::one_line_excerpt("", 10).empty());
  CHECK(kube::one_line_excerpt("abcdefghij", 10) == "abcdefghij");
  CHECK(kube::one_line_excerpt("abcdefghijk", 10) == "abcdefg...");
  // "é" is two bytes: it is dropped whole, never split.
  CHECK(kube::one_line_excerpt("abcdef\xc3\xa9xyz", 10) == "abcdef...");
  CHECK(kube::one_line_excerpt("abcde \xc3\xa9xyz", 10) == "abcde...");
  CHECK(kube::one_line_excerpt("\xed\xa0\x80", 10) == "???");  // a UTF-16 surrogate
  CHECK(kube::one_line_excerpt("\xc0\xaf", 10) == "??");       // overlong '/'
  CHECK(kube::one_line_excerpt("\xf0\x9f\x98\x80!", 10) == "\xf0\x9f\x98\x80!");
  CHECK(kube::one_line_excerpt("abcdef", 2) == "ab");
}
