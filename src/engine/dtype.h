// engine/dtype.h — the safetensors element types, their sizes and names, and the exact conversions
// between the floating-point ones (F32, BF16, F16) and fp32. Upcasting BF16/F16 to fp32 is exact;
// downcasting rounds to nearest, ties to even, as torch's .to(dtype) does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace rvformer::engine {

enum class DType { BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16, F16, BF16, I32, U32, F32, I64, U64, F64 };

std::optional<DType> parse_dtype(std::string_view name);
std::string_view dtype_name(DType dtype);
std::size_t dtype_size(DType dtype);

// The dtypes the engine accepts for weights (and can write).
bool is_weight_dtype(DType dtype);

float bf16_to_float(std::uint16_t bits);
std::uint16_t float_to_bf16(float value);
float f16_to_float(std::uint16_t bits);
std::uint16_t float_to_f16(float value);

// Little-endian element bytes of a weight dtype <-> fp32 values; `bytes` holds values.size() elements.
void decode_floats(DType dtype, std::span<const std::uint8_t> bytes, std::span<float> values);
void encode_floats(DType dtype, std::span<const float> values, std::span<std::uint8_t> bytes);

// How many elements (little-endian, weight dtype) are +0 or -0.
std::size_t count_zero_elements(DType dtype, std::span<const std::uint8_t> bytes);

}  // namespace rvformer::engine
