// compiler/physical.h — the physical constants that make logical circuit values exact in a Qwen3.5
// forward pass computed in fp32, with every weight exactly representable in bf16.
// docs/circuit-encoding.md derives each one.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace rvformer::compiler {

// Residual constant: dominates every RMSNorm's mean square so data never changes the norm scale.
inline constexpr double kResidualConstant = 1099511627776.0;  // 2^40
// Constants that are not bf16 numbers are split into bf16 pieces, one per constant dimension; there
// are at least 4, and as many more as make the width over them a power of four soonest (any count
// keeps d·K² exact and the data below half its ulp).
inline constexpr int kMinConstantDims = 4;

// GDN geometry of Qwen3.5-4B, which compiled layers keep so they can sit in front of that model.
inline constexpr int kKeyDim = 128;
inline constexpr int kKeyHeadsTotal = 16;
// Qwen3.5-4B's MLP width: a compiled layer wider than it would widen every layer of a merge.
inline constexpr int kMlpWidth = 9216;

// One-hot keys and queries: SiLU(32) = 32 and 32·(32² + 1e-6)^-½ = 1 exactly.
inline constexpr double kOneHotLevel = 32;
// Disabled selects are pushed to ≤ −96, where SiLU is exactly −0.
inline constexpr double kSelectGate = 128;

// A stored 1 bit: V with fl(V · fp32(128^-½)) = 16 exactly (bits 0x433504f4). V is not a bf16
// number, so a lane's value is Y·form − (Y − V): the bit's weight Y = 272 is, and the constant is
// split into bf16 pieces. A 0 gives at most V − Y ≤ −89, where SiLU is exactly −0.
inline const double kBitValue = static_cast<double>(std::bit_cast<float>(std::uint32_t{0x433504f4}));
inline constexpr double kLaneGate = 272;
// V's lowest set bit is 2^-14, so a lane's terms sum to V exactly in any order while their
// magnitudes add up to less than 2^24 · 2^-14 = 1024; with Y = 272 that holds for every form that
// stores a 1 with terms of magnitude at most circuit::kLaneMagnitudeLimit = 3 (the worst case,
// three unit terms and no constant: 3·272 + (272 − V) = 907).
// Two balancing lanes per value head hold V·2^18·f, reading as 2^22·f: the mean square of a
// read-out is then 2^38·f² whatever the data, so the gated RMSNorm multiplies by exactly 2^-19/f.
// The data must not move it: 126 lanes of up to L stored units read at most 126·(16L)², which stays
// below 2^20·f², half an ulp of one balancing lane's square (so any summation order gives the same
// sum), when L ≤ 4f. So f = 1 for bits and levels up to 4, and f = L/4 for larger stored levels (a
// power of two: the scaling is exact).
inline const double kBalanceValue = kBitValue * 262144.0;
inline double balance_factor(double largest_stored_level) { return std::max(1.0, largest_stored_level / 4); }
// Gate z = 32·f (SiLU(32·f) = 32·f) and norm weight 1024: a stored unit reads out as
// 16·(2^-19/f)·1024·32·f = 1.
inline constexpr double kGateZ = 32;
inline constexpr double kReadNormWeight = 1024;

// Write strength b = 256·β − 128: σ(−128) = 0, σ(0) = 1/2, σ(128) = 1 exactly.
inline constexpr double kBetaSlope = 256;

// Neuron gates are scaled so the smallest non-zero logical gate value becomes ±128.
inline constexpr double kGateLevel = 128;

// True when `value` is exactly a bf16 number (8 significant bits, fp32's exponent range).
bool is_bf16(double value);
// bf16 numbers of one sign whose sum is exactly `value` (an fp32 number), largest first; empty for 0.
std::vector<double> bf16_pieces(double value);

}  // namespace rvformer::compiler
