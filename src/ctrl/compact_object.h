#pragma once

#include <rapidjson/document.h>

#include <memory>

namespace ctrl {

// A copy of a JSON object in one exactly sized heap block, for objects kept in a cache for long.
// A default rapidjson::Document takes a 64 KiB pool chunk for the first value it stores, and a
// DOM copied from a bigger one keeps the slack of every grown array: a cached Deployment cost tens
// of KiB. Here the value is re-parsed from its compact text twice, once to learn the exact pool
// size and once into a block of that size, so a cached object costs about its DOM and no more.
std::shared_ptr<rapidjson::Document> compact_object(const rapidjson::Value& value);

}  // namespace ctrl
