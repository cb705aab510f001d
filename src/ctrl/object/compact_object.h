// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

#include <memory>
#include <string>
#include <string_view>

namespace ctrl {

// A copy of a JSON object in one exactly sized heap block, for objects kept in a cache for long.
// A default rapidjson::Document takes a 64 KiB pool chunk for the first value it stores, and a
// DOM copied from a bigger one keeps the slack of every grown array: a cached Deployment cost tens
// of KiB. Here the value is re-parsed from its compact text twice, once to learn the exact pool
// size and once into a block of that size, so a cached object costs about its DOM and no more.
std::shared_ptr<rapidjson::Document> compact_object(const rapidjson::Value& value);

// The compact JSON text of a value: what a cache keeps of an object for long. As text an object
// costs about a third of its DOM.
std::string compact_text(const rapidjson::Value& value);

// A short-lived DOM of cached text, for one reader: one parse into a pool sized from the text, so
// no 64 KiB default chunk. The text must be valid JSON (compact_text's output).
std::shared_ptr<rapidjson::Document> parse_compact_text(std::string_view text);

}  // namespace ctrl
