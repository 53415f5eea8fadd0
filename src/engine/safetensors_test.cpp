// engine/safetensors_test.cpp — the safetensors writer and the strict header parser: every kind of
// malformed file is rejected with a message naming the file and, where there is one, the tensor.
#include "engine/safetensors.h"

#include <cstring>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "support/error.h"
#include "support/file.h"

namespace rvformer::engine {
namespace {

std::vector<std::uint8_t> raw_file(const std::string& header, std::size_t data_bytes) {
  std::vector<std::uint8_t> bytes(8 + header.size() + data_bytes, 0);
  const std::uint64_t size = header.size();
  std::memcpy(bytes.data(), &size, 8);
  std::memcpy(bytes.data() + 8, header.data(), header.size());
  return bytes;
}

std::string error_of(const std::vector<std::uint8_t>& bytes) {
  try {
    parse_safetensors(bytes, "t.safetensors");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void expect_error(const std::vector<std::uint8_t>& bytes, const std::string& fragment) {
  const std::string message = error_of(bytes);
  EXPECT_NE(message.find(fragment), std::string::npos) << "message: " << message;
  EXPECT_EQ(message.rfind("t.safetensors: ", 0), 0u) << message;
}

const std::string two_tensors =
    R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[1,3],"data_offsets":[8,14]}})";

TEST(Safetensors, ParsesAValidHeader) {
  const auto header = parse_safetensors(raw_file(two_tensors, 14), "t.safetensors");
  ASSERT_EQ(header.tensors.size(), 2u);
  EXPECT_EQ(header.tensors[1].name, "b");
  EXPECT_EQ(header.tensors[1].dtype, DType::BF16);
  EXPECT_EQ(header.tensors[1].shape, (std::vector<std::size_t>{1, 3}));
  EXPECT_EQ(header.data_start, 8 + two_tensors.size());
}

TEST(Safetensors, AcceptsMetadataPaddingAndEmptyTensors) {
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"e":{"dtype":"F16","shape":[0,4],"data_offsets":[0,0]},"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}   )";
  const auto parsed = parse_safetensors(raw_file(header, 4), "t.safetensors");
  EXPECT_EQ(parsed.metadata.at("format"), "pt");
  EXPECT_EQ(parsed.tensors.size(), 2u);
}

TEST(Safetensors, RejectsBadLengthsAndJson) {
  expect_error({1, 2, 3}, "too short");
  auto bytes = raw_file(two_tensors, 14);
  const std::uint64_t huge = 1000;
  std::memcpy(bytes.data(), &huge, 8);
  expect_error(bytes, "header length 1000 does not fit");
  const std::uint64_t enormous = ~std::uint64_t{0};
  std::memcpy(bytes.data(), &enormous, 8);
  expect_error(bytes, "does not fit");
  expect_error(raw_file("{\"a\":", 0), "not valid JSON");
  expect_error(raw_file("[1,2]", 0), "must be a JSON object");
  expect_error(raw_file(R"({"a":{"dtype":"F32","shape":[[[[1]]]],"data_offsets":[0,4]}})", 4), "nested too deeply");
}

TEST(Safetensors, RejectsBadEntries) {
  expect_error(raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}})", 4), "tensor 'a': entry must");
  expect_error(raw_file(R"({"a":{"dtype":"Q4","shape":[1],"data_offsets":[0,4]}})", 4), "tensor 'a': unknown dtype");
  expect_error(raw_file(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4), "tensor 'a': shape");
  expect_error(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 4), "need 8 bytes but data_offsets span 4");
  expect_error(raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,8]}})", 4), "fall outside");
  expect_error(raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", 4), "fall outside");
  expect_error(raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4), "data_offsets must be a list");
  expect_error(raw_file(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,4]}})", 4),
               "shape is too large");
  expect_error(raw_file(R"({"__metadata__":{"k":1}})", 0), "__metadata__ entry 'k'");
}

TEST(Safetensors, RejectsDuplicatesOverlapsAndGaps) {
  expect_error(raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8),
               "tensor 'a' appears twice");
  expect_error(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8),
               "tensors 'a' and 'b' overlap");
  expect_error(raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8), "bytes 0 to 4 of the data region belong to no tensor");
  expect_error(raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 6), "bytes 4 to 6");
}

TEST(Safetensors, WriterRoundTripsThroughTheMappedReader) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "round_trip.safetensors";
  const std::vector<float> a{1.0f, -2.5f, 3.0f, 0.0f, 0.0f, 7.0f};
  const std::vector<float> b{0.5f, 65504.0f};
  std::vector<float> zeros(300000, 0.0f);  // spans whole zero blocks written as holes
  zeros[299999] = 1.0f;
  const std::vector<TensorToWrite> tensors{
      {"a", DType::F32, {2, 3}, a}, {"zeros", DType::BF16, {300000}, zeros}, {"b", DType::F16, {2}, b}};
  write_safetensors(path, tensors, {{"format", "pt"}});
  const SafetensorsFile file(path);
  EXPECT_EQ(file.header().data_start % 8, 0u);
  EXPECT_EQ(file.header().metadata.at("format"), "pt");
  ASSERT_EQ(file.header().tensors.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const TensorRecord& record = file.header().tensors[i];
    EXPECT_EQ(record.name, tensors[i].name);
    std::vector<float> values(record.element_count());
    decode_floats(record.dtype, file.tensor_bytes(record), values);
    EXPECT_EQ(values, std::vector<float>(tensors[i].values.begin(), tensors[i].values.end())) << record.name;
  }
}

TEST(Safetensors, WriterRejectsBadTensors) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "bad.safetensors";
  const std::vector<float> values{1.0f, 2.0f};
  EXPECT_THROW(write_safetensors(path, std::vector<TensorToWrite>{{"a", DType::F32, {3}, values}}), Error);
  EXPECT_THROW(write_safetensors(path, std::vector<TensorToWrite>{{"a", DType::I32, {2}, values}}), Error);
  EXPECT_THROW(write_safetensors(path, std::vector<TensorToWrite>{{"a", DType::F32, {2}, values},
                                                                  {"a", DType::F32, {2}, values}}),
               Error);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Safetensors, MissingFileIsAClearError) {
  EXPECT_THROW(SafetensorsFile(std::filesystem::path(::testing::TempDir()) / "absent.safetensors"), Error);
}

}  // namespace
}  // namespace rvformer::engine
