// tokenizer/json_node.cpp — see json_node.h.
#include "tokenizer/json_node.h"

#include <fmt/format.h>

#include "support/error.h"

namespace rvformer::tokenizer {

JsonNode::JsonNode(const nlohmann::json& value, std::string_view origin, std::string path)
    : value_(&value), origin_(origin), path_(std::move(path)) {}

void JsonNode::fail(std::string_view problem) const {
  if (path_.empty()) rvformer::fail("{}: {}", origin_, problem);
  rvformer::fail("{}: {}: {}", origin_, path_, problem);
}

void JsonNode::expect(bool ok, std::string_view what) const {
  if (!ok) fail(fmt::format("expected {}, found {}", what, value_->type_name()));
}

JsonNode JsonNode::operator[](std::string_view key) const {
  auto node = find(key);
  if (!node) fail(fmt::format("missing key \"{}\"", key));
  return *node;
}

std::optional<JsonNode> JsonNode::find(std::string_view key) const {
  expect(value_->is_object(), "an object");
  auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return JsonNode(*it, origin_, path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key));
}

std::size_t JsonNode::size() const {
  expect(value_->is_array(), "an array");
  return value_->size();
}

JsonNode JsonNode::operator[](std::size_t index) const {
  expect(value_->is_array(), "an array");
  return JsonNode((*value_)[index], origin_, fmt::format("{}[{}]", path_, index));
}

std::string JsonNode::string() const {
  expect(value_->is_string(), "a string");
  return value_->get<std::string>();
}

bool JsonNode::boolean() const {
  expect(value_->is_boolean(), "true or false");
  return value_->get<bool>();
}

std::int64_t JsonNode::integer() const {
  expect(value_->is_number_integer(), "an integer");
  return value_->get<std::int64_t>();
}

bool JsonNode::boolean_or(std::string_view key, bool fallback) const {
  auto node = find(key);
  return node ? node->boolean() : fallback;
}

}  // namespace rvformer::tokenizer
