// tokenizer/normalizer.cpp — see normalizer.h.
#include "tokenizer/normalizer.h"

#include <fmt/format.h>
#include <unicode/bytestream.h>

#include "support/error.h"

namespace rvformer::tokenizer {

namespace {

const icu::Normalizer2* icu_form(std::string_view type) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* form = nullptr;
  if (type == "NFC") form = icu::Normalizer2::getNFCInstance(status);
  if (type == "NFD") form = icu::Normalizer2::getNFDInstance(status);
  if (type == "NFKC") form = icu::Normalizer2::getNFKCInstance(status);
  if (type == "NFKD") form = icu::Normalizer2::getNFKDInstance(status);
  if (U_FAILURE(status)) fail("ICU has no {} normalizer: {}", type, u_errorName(status));
  return form;
}

}  // namespace

Normalizer Normalizer::from_json(const std::optional<JsonNode>& node) {
  Normalizer normalizer;
  if (node) normalizer.add(*node);
  return normalizer;
}

void Normalizer::add(const JsonNode& node) {
  const std::string type = node["type"].string();
  if (type == "Sequence") {
    const JsonNode steps = node["normalizers"];
    for (std::size_t i = 0; i < steps.size(); ++i) add(steps[i]);
    return;
  }
  const icu::Normalizer2* form = icu_form(type);
  if (!form) node.fail(fmt::format("normalizer type \"{}\" is not supported (NFC, NFD, NFKC, NFKD, Sequence)", type));
  forms_.push_back(form);
}

std::string Normalizer::apply(std::string_view text) const {
  std::string current(text);
  for (const icu::Normalizer2* form : forms_) {
    UErrorCode status = U_ZERO_ERROR;
    const icu::StringPiece piece(current.data(), static_cast<std::int32_t>(current.size()));
    if (form->isNormalizedUTF8(piece, status) && U_SUCCESS(status)) continue;
    std::string normalized;
    icu::StringByteSink<std::string> sink(&normalized);
    status = U_ZERO_ERROR;
    form->normalizeUTF8(0, piece, sink, nullptr, status);
    if (U_FAILURE(status)) fail("Unicode normalization failed: {}", u_errorName(status));
    current = std::move(normalized);
  }
  return current;
}

}  // namespace rvformer::tokenizer
