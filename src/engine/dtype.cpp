// engine/dtype.cpp — see dtype.h. The host must be little-endian, like the safetensors format.
#include "engine/dtype.h"

#include <array>
#include <bit>
#include <cstring>
#include <stdexcept>

namespace rvformer::engine {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::size_t size;
};

constexpr std::array<DTypeInfo, 15> dtype_table{{
    {DType::BOOL, "BOOL", 1}, {DType::U8, "U8", 1},     {DType::I8, "I8", 1},
    {DType::F8_E5M2, "F8_E5M2", 1}, {DType::F8_E4M3, "F8_E4M3", 1}, {DType::I16, "I16", 2},
    {DType::U16, "U16", 2},   {DType::F16, "F16", 2},   {DType::BF16, "BF16", 2},
    {DType::I32, "I32", 4},   {DType::U32, "U32", 4},   {DType::F32, "F32", 4},
    {DType::I64, "I64", 8},   {DType::U64, "U64", 8},   {DType::F64, "F64", 8},
}};

const DTypeInfo& info(DType dtype) { return dtype_table[static_cast<std::size_t>(dtype)]; }

std::uint16_t load_u16(const std::uint8_t* bytes) {
  std::uint16_t bits;
  std::memcpy(&bits, bytes, sizeof bits);
  return bits;
}

void store_u16(std::uint8_t* bytes, std::uint16_t bits) { std::memcpy(bytes, &bits, sizeof bits); }

}  // namespace

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& entry : dtype_table) {
    if (entry.name == name) return entry.dtype;
  }
  return std::nullopt;
}

std::string_view dtype_name(DType dtype) { return info(dtype).name; }
std::size_t dtype_size(DType dtype) { return info(dtype).size; }

bool is_weight_dtype(DType dtype) { return dtype == DType::F32 || dtype == DType::BF16 || dtype == DType::F16; }

float bf16_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

std::uint16_t float_to_bf16(float value) {
  auto bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);  // quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

float f16_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in fp32.
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(magnitude) | sign);
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

std::uint16_t float_to_f16(float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  if (magnitude >= 0x47800000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65536: infinity
  if (magnitude >= 0x38800000u) {
    // Normal in f16 (rounding may carry into the exponent, up to infinity, which is right).
    const std::uint32_t rounded = magnitude + 0x0fffu + ((magnitude >> 13) & 1u);
    return static_cast<std::uint16_t>(sign | ((rounded >> 13) - (112u << 10)));
  }
  if (magnitude <= 0x33000000u) return sign;  // at most 2^-25: rounds to zero (the tie goes to even)
  // Subnormal in f16: the 24-bit significand shifted to units of 2^-24, rounded to nearest even.
  const std::uint32_t exponent = magnitude >> 23;
  const std::uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  const std::uint32_t shift = 126 - exponent;
  std::uint32_t result = significand >> shift;
  const std::uint32_t remainder = significand & ((1u << shift) - 1);
  const std::uint32_t half = 1u << (shift - 1);
  if (remainder > half || (remainder == half && (result & 1u))) ++result;
  return static_cast<std::uint16_t>(sign | result);
}

void decode_floats(DType dtype, std::span<const std::uint8_t> bytes, std::span<float> values) {
  switch (dtype) {
    case DType::F32:
      std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
      return;
    case DType::BF16:
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = bf16_to_float(load_u16(&bytes[2 * i]));
      return;
    case DType::F16:
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = f16_to_float(load_u16(&bytes[2 * i]));
      return;
    default:
      break;
  }
  throw std::logic_error("decode_floats: not a weight dtype");
}

void encode_floats(DType dtype, std::span<const float> values, std::span<std::uint8_t> bytes) {
  switch (dtype) {
    case DType::F32:
      std::memcpy(bytes.data(), values.data(), values.size() * sizeof(float));
      return;
    case DType::BF16:
      for (std::size_t i = 0; i < values.size(); ++i) store_u16(&bytes[2 * i], float_to_bf16(values[i]));
      return;
    case DType::F16:
      for (std::size_t i = 0; i < values.size(); ++i) store_u16(&bytes[2 * i], float_to_f16(values[i]));
      return;
    default:
      break;
  }
  throw std::logic_error("encode_floats: not a weight dtype");
}

std::size_t count_zero_elements(DType dtype, std::span<const std::uint8_t> bytes) {
  std::size_t zeros = 0;
  if (dtype == DType::F32) {
    for (std::size_t i = 0; i + 4 <= bytes.size(); i += 4) {
      std::uint32_t bits;
      std::memcpy(&bits, &bytes[i], sizeof bits);
      zeros += (bits & 0x7fffffffu) == 0 ? 1 : 0;
    }
    return zeros;
  }
  for (std::size_t i = 0; i + 2 <= bytes.size(); i += 2) zeros += (load_u16(&bytes[i]) & 0x7fffu) == 0 ? 1 : 0;
  return zeros;
}

}  // namespace rvformer::engine
