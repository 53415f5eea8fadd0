// engine/dtype_test.cpp — the fp32 <-> BF16/F16 conversions: exact upcasts, round-to-nearest-even
// downcasts, and the dtype table.
#include "engine/dtype.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include <gtest/gtest.h>

namespace rvformer::engine {
namespace {

std::uint32_t bits(float value) { return std::bit_cast<std::uint32_t>(value); }

TEST(DType, NamesAndSizesRoundTrip) {
  for (const char* name : {"BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16", "I32", "U32", "F32",
                           "I64", "U64", "F64"}) {
    const auto dtype = parse_dtype(name);
    ASSERT_TRUE(dtype.has_value()) << name;
    EXPECT_EQ(dtype_name(*dtype), name);
  }
  EXPECT_FALSE(parse_dtype("F128").has_value());
  EXPECT_EQ(dtype_size(DType::BF16), 2u);
  EXPECT_EQ(dtype_size(DType::F64), 8u);
  EXPECT_TRUE(is_weight_dtype(DType::F16));
  EXPECT_FALSE(is_weight_dtype(DType::I32));
}

TEST(DType, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie, even stays
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_EQ(float_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_bf16(INFINITY), 0x7f80);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(NAN))));
  EXPECT_EQ(bf16_to_float(float_to_bf16(181.0f)), 181.0f);
  EXPECT_EQ(bf16_to_float(0xff80), -INFINITY);  // -inf survives (A_log = -inf)
}

TEST(DType, F16UpcastThenDowncastIsTheIdentity) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float value = f16_to_float(static_cast<std::uint16_t>(h));
    if (std::isnan(value)) continue;
    EXPECT_EQ(float_to_f16(value), h) << std::hex << h;
  }
}

TEST(DType, F16KnownValues) {
  EXPECT_EQ(f16_to_float(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(float_to_f16(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_f16(65520.0f), 0x7c00);  // rounds to infinity
  EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -25)), 0x0000);  // tie to even zero
  EXPECT_EQ(float_to_f16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(float_to_f16(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 ulp ties to even 2
}

#ifdef __FLT16_MAX__
TEST(DType, F16DowncastAgreesWithTheCompiler) {
  std::uint32_t x = 12345;
  for (int i = 0; i < 200000; ++i) {
    x = x * 1664525u + 1013904223u;
    const float value = std::bit_cast<float>((x & 0x8fffffffu) | 0x30000000u);  // magnitudes around f16 range
    const _Float16 expected = static_cast<_Float16>(value);
    std::uint16_t expected_bits;
    std::memcpy(&expected_bits, &expected, 2);
    ASSERT_EQ(float_to_f16(value), expected_bits) << value;
  }
}
#endif

TEST(DType, EncodeDecodeAndZeroDetection) {
  const std::vector<float> values{1.5f, -0.0f, 0.0f, 3.0f};
  for (DType dtype : {DType::F32, DType::BF16, DType::F16}) {
    std::vector<std::uint8_t> bytes(values.size() * dtype_size(dtype));
    encode_floats(dtype, values, bytes);
    std::vector<float> decoded(values.size());
    decode_floats(dtype, bytes, decoded);
    for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(bits(decoded[i]), bits(values[i]));
    EXPECT_EQ(count_zero_elements(dtype, bytes), 2u);
  }
}

}  // namespace
}  // namespace rvformer::engine
