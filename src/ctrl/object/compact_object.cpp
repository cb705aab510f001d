// SPDX-License-Identifier: Apache-2.0
#include "ctrl/object/compact_object.h"

#include <glog/logging.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstddef>
#include <new>

namespace ctrl {
namespace {

using Pool = rapidjson::MemoryPoolAllocator<>;
using Document = rapidjson::Document;

// Used only while parsing; empty between parses, so one serves every document (one thread).
rapidjson::CrtAllocator& parse_stack_allocator() {
  static rapidjson::CrtAllocator allocator;
  return allocator;
}

// The pool's chunk header (three words, see rapidjson/allocators.h) that precedes a user buffer.
constexpr std::size_t kChunkHeader = 3 * sizeof(void*);
// Should a re-parse ever need more than measured, the pool grows by chunks this small.
constexpr std::size_t kOverflowChunk = 256;
constexpr unsigned kParseFlags = rapidjson::kParseIterativeFlag;

// One heap block: this header, then the pool's buffer.
struct Block {
  explicit Block(std::size_t buffer_size)
      : pool(buffer(), buffer_size, kOverflowChunk),
        doc(rapidjson::kNullType, &pool, 256, &parse_stack_allocator()) {}
  void* buffer() { return reinterpret_cast<char*>(this) + sizeof(Block); }

  Pool pool;
  Document doc;
};

std::size_t pool_size_for(const rapidjson::StringBuffer& text) {
  static Pool scratch;
  Document measure(rapidjson::kNullType, &scratch, 256, &parse_stack_allocator());
  measure.Parse<kParseFlags>(text.GetString(), text.GetSize());
  CHECK(!measure.HasParseError()) << "compact_object: our own JSON did not parse";
  std::size_t size = scratch.Size();
  scratch.Clear();
  return size;
}

std::shared_ptr<Document> in_block(std::size_t buffer_size, const char* text, std::size_t length) {
  void* memory = ::operator new(sizeof(Block) + buffer_size);
  auto* block = new (memory) Block(buffer_size);
  block->doc.Parse<kParseFlags>(text, length);
  CHECK(!block->doc.HasParseError()) << "compact_object: cached JSON did not parse";
  return std::shared_ptr<Document>(&block->doc, [block](Document*) {
    block->~Block();
    ::operator delete(block);
  });
}

}  // namespace

std::shared_ptr<Document> compact_object(const rapidjson::Value& value) {
  rapidjson::StringBuffer text;
  rapidjson::Writer<rapidjson::StringBuffer> writer(text);
  value.Accept(writer);
  const std::size_t buffer_size = kChunkHeader + pool_size_for(text) + 8;
  return in_block(buffer_size, text.GetString(), text.GetSize());
}

std::string compact_text(const rapidjson::Value& value) {
  rapidjson::StringBuffer text;
  rapidjson::Writer<rapidjson::StringBuffer> writer(text);
  value.Accept(writer);
  return std::string(text.GetString(), text.GetSize());
}

std::shared_ptr<Document> parse_compact_text(std::string_view text) {
  // A DOM takes about two and a half times its compact text; should it need more, the pool grows
  // by small chunks.
  return in_block(kChunkHeader + text.size() * 3 + 64, text.data(), text.size());
}

}  // namespace ctrl
