// SPDX-License-Identifier: Apache-2.0
#include "kube/api/list_split.h"

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <cstddef>
#include <string>

#include "kube/core/api_error.h"

namespace kube {
namespace {

// Follows the nesting and notes what split_list needs. Depth 1 is the List object itself.
class ListHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, ListHandler> {
 public:
  ListHandler(const rapidjson::MemoryStream& stream, std::string_view body, ListText& out)
      : stream_(stream), body_(body), out_(out) {}

  bool Default() {
    key_.clear();
    return true;
  }
  bool String(const char* s, rapidjson::SizeType length, bool) {
    const std::string_view value(s, length);
    if (depth_ == 1 && key_ == "kind") out_.kind = value;
    if (depth_ == 1 && key_ == "apiVersion") out_.api_version = value;
    if (depth_ == 2 && in_metadata_ && key_ == "resourceVersion") out_.resource_version = value;
    if (depth_ == 2 && in_metadata_ && key_ == "continue") out_.continue_token = value;
    key_.clear();
    return true;
  }
  bool Key(const char* s, rapidjson::SizeType length, bool) {
    // Only names at the List's own level and in its metadata matter.
    if (depth_ <= 2) key_.assign(s, length);
    return true;
  }
  bool StartObject() {
    // The iterative parser calls StartObject and EndObject with the brace not yet taken.
    if (depth_ == 2 && in_items_) item_start_ = stream_.Tell();
    if (depth_ == 1 && key_ == "metadata") in_metadata_ = true;
    ++depth_;
    key_.clear();
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    --depth_;
    if (depth_ == 2 && in_items_) {
      out_.items.push_back(body_.substr(item_start_, stream_.Tell() + 1 - item_start_));
    }
    if (depth_ == 1) in_metadata_ = false;
    return true;
  }
  bool StartArray() {
    if (depth_ == 1 && key_ == "items") in_items_ = true;
    ++depth_;
    key_.clear();
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    --depth_;
    if (depth_ == 1) in_items_ = false;
    return true;
  }

 private:
  const rapidjson::MemoryStream& stream_;
  std::string_view body_;
  ListText& out_;
  int depth_ = 0;
  std::string key_;
  bool in_metadata_ = false;
  bool in_items_ = false;
  std::size_t item_start_ = 0;
};

ApiError not_a_list(std::string_view what, std::string reason) {
  ApiError err;
  err.code = make_error_code(Errc::unknown);
  err.http_status = 200;
  err.message = std::string(what) + ": response is not a JSON list (" + std::move(reason) + ")";
  return err;
}

}  // namespace

Result<ListText> split_list(std::string_view body, std::string_view what) {
  ListText out;
  std::size_t first = body.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || body[first] != '{') {
    return not_a_list(what, "not an object");
  }
  rapidjson::MemoryStream stream(body.data(), body.size());
  ListHandler handler(stream, body, out);
  rapidjson::Reader reader;
  if (!reader.Parse<rapidjson::kParseIterativeFlag>(stream, handler)) {
    return not_a_list(what, std::string(rapidjson::GetParseError_En(reader.GetParseErrorCode())) +
                                " at offset " + std::to_string(reader.GetErrorOffset()));
  }
  return out;
}

}  // namespace kube
