// tokenizer/json_node.h — typed, checked access to a parsed tokenizer.json. Every failure is an
// rvformer::Error of one line naming the file and the key path ("model.merges[3]").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace rvformer::tokenizer {

class JsonNode {
 public:
  // `origin` names the file in messages and must outlive the node.
  JsonNode(const nlohmann::json& value, std::string_view origin, std::string path = {});

  const nlohmann::json& json() const { return *value_; }
  const std::string& path() const { return path_; }

  // The value of a required key of this object.
  JsonNode operator[](std::string_view key) const;
  // The value of an optional key; an absent key and null are both nothing.
  std::optional<JsonNode> find(std::string_view key) const;
  // The elements of this array.
  std::size_t size() const;
  JsonNode operator[](std::size_t index) const;

  std::string string() const;
  bool boolean() const;
  std::int64_t integer() const;
  // An optional boolean key with the value Hugging Face assumes when it is absent or null.
  bool boolean_or(std::string_view key, bool fallback) const;

  [[noreturn]] void fail(std::string_view problem) const;

 private:
  void expect(bool ok, std::string_view what) const;

  const nlohmann::json* value_;
  std::string_view origin_;
  std::string path_;
};

}  // namespace rvformer::tokenizer
