// emulator/vector_unit.cpp — see vector_unit.h. Every operation first checks all of its operands and
// changes nothing when one is out of range. Those that write AM then go a line at a time, as the
// weights do, but vu.attend, which computes all of its outputs into result_ and only then writes
// them, so that its output may overlap its input.
#include "emulator/vector_unit.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "support/error.h"

namespace rvformer::emulator {
namespace {

using isa::Op;

static_assert(std::endian::native == std::endian::little, "WM words are read with memcpy");

constexpr std::uint32_t kMaxCount = 4096;                // VL as rows or elements
constexpr std::uint32_t kMaxNormLength = 64;             // vu.rmsnorm's VL: two AM banks' row
constexpr std::uint32_t kBankRowElements = 32;           // AM as the weights hold it: a bank's row,
constexpr std::uint32_t kAmRowElements = 256;            // and a row of all 8 banks
constexpr std::uint32_t kMaxColumns = kAmRowElements;    // a matrix's COLS: its input is one AM row,
constexpr std::uint32_t kMatrixInputAlign = 2 * kBankRowElements;  // from an even bank's first element
constexpr std::uint32_t kMaxPositions = 512;             // vu.attend's VL
constexpr std::uint32_t kAttentionBlock = 32;            // positions vu.attend takes at a time
constexpr std::uint32_t kRopeTableBytes = 32;            // vu.rope's table: 8 cosines, then 8 sines
constexpr std::uint32_t kWeightLineBytes = 64;           // a WM line: a matrix's rows start at one
constexpr std::uint32_t kMaxRowLength = kWeightLineBytes;  // vu.row16's VL: one WM line
constexpr std::uint32_t kPairBytes = 8;                  // a requantisation pair
constexpr std::uint32_t kMaxAttentionHeadSize = 8;       // HS of vu.attend: scores within ±2^22
constexpr std::uint32_t kMinShift = 1, kMaxShift = 62;  // a requantisation pair's shift
constexpr std::uint32_t kMaxMultiplier = 255;           // and its multiplier, from 0
// The bits of a pair's words vu.matvec16 reads (matvec_requantise), and the shift it reads as 0.
constexpr std::uint32_t kMultiplierMask = 255, kShiftMask = 63, kShiftOfZero = 64;
constexpr std::uint32_t kMaxMul16Shift = 30;

// Fraction bits of the fixed-point formats (STORY_FRAC_* and the Q15 weights of story_ops.h).
constexpr int kFracNorm = 9;    // vu.rmsnorm's output
constexpr int kFracH = 9;       // vu.silu's input and output
constexpr int kFracQ = 7;       // queries and keys: scores in Q14
constexpr int kFracRope = 14;   // the cos and sin tables

using Int128 = __int128;

// Every activation an operation writes is a 13-bit value.
constexpr std::int64_t kActivationLow = -(1 << 12), kActivationHigh = (1 << 12) - 1;

bool in_range(std::uint32_t value, std::uint32_t low, std::uint32_t high) { return value >= low && value <= high; }

// ⌊(value + 2^(shift−1)) / 2^shift⌋: to nearest, halves towards +∞ (the header's round_shift).
std::int64_t round_shift(std::int64_t value, int shift) {
  return (value + (std::int64_t{1} << (shift - 1))) >> shift;
}

// Whether a value is one an AM element holds: 13 bits.
bool is_element(std::int32_t value) { return value >= kActivationLow && value <= kActivationHigh; }

// The header's sat13: an activation clamped to 13 bits.
std::int16_t to_activation(std::int64_t value) {
  return static_cast<std::int16_t>(std::clamp(value, kActivationLow, kActivationHigh));
}

// round_shift(acc · multiplier, shift) for a multiplier in [0, 255] and a shift in [1, 62]: |acc| <=
// 2^31, so the product and its rounding term stay below 2^62 and the sum is exact in 64 bits.
std::int64_t requantise(std::int64_t acc, std::int32_t multiplier, std::int32_t shift) {
  return round_shift(acc * multiplier, shift);
}

// A row of vu.matvec16 requantised by the pair {multiplier_word, shift_word} as the instruction reads
// it: the multiplier's low byte, the shift's low six bits, 0 standing for 64. The weights read a
// row's pair while the instruction runs, 16 rows at a time, after earlier rows' outputs are written,
// so they cannot refuse a pair; for every pair the quantiser writes (multiplier 0..255, shift 1..62)
// this is story_requant13. A shift of 63 or 64 gives 0, round_shift's value for every |m · acc| <
// 2^62 (|acc| <= 2^27 here), which 64 bits could not compute.
std::int16_t matvec_requantise(std::int64_t acc, std::int32_t multiplier_word, std::int32_t shift_word) {
  const std::uint32_t multiplier = static_cast<std::uint32_t>(multiplier_word) & kMultiplierMask;
  const std::uint32_t low_shift = static_cast<std::uint32_t>(shift_word) & kShiftMask;
  const std::uint32_t shift = low_shift == 0 ? kShiftOfZero : low_shift;
  if (shift > kMaxShift) return 0;
  return to_activation(requantise(acc, static_cast<std::int32_t>(multiplier), static_cast<std::int32_t>(shift)));
}

// The powers of one octave in eighths, 2^(−k/8) in Q15, k = 0..7: round(2^(15 − k/8)), in long double
// (no value lies within 0.02 of a half).
std::array<std::uint16_t, VectorUnit::kExp2Entries> make_exp2_table() {
  std::array<std::uint16_t, VectorUnit::kExp2Entries> table{};
  for (std::size_t k = 0; k < table.size(); ++k)
    table[k] = static_cast<std::uint16_t>(std::llround(std::exp2(15.0L - static_cast<long double>(k) / 8)));
  return table;
}
const std::array<std::uint16_t, VectorUnit::kExp2Entries> kExp2 = make_exp2_table();

// 2^(x/8) rounded (story_pow2_eighths): x = 8a − b with b in 0..7 is the table's entry b times 2^(a − 15).
std::int64_t pow2_eighths(std::int64_t x) {
  const std::int64_t a = -((-x) >> 3);  // ⌈x / 8⌉
  const std::int64_t entry = kExp2[static_cast<std::size_t>(8 * a - x)];
  if (a >= 15) return entry << (a - 15);
  return 15 - a > 62 ? 0 : round_shift(entry, static_cast<int>(15 - a));
}

// The reciprocals of the softmax's sums: a sum S with ⌊log2 S⌋ = L falls in bucket j = ⌊S / 2^(L−8)⌋ −
// 256 of [0, 255], whose entry round(2^15 / √((1 + j/256)(1 + (j+1)/256))) = round(2^23 / √P), P =
// (256 + j)(257 + j), is 2^(15+L) / S at the geometric mean of the bucket's ends. Found exactly in
// integers: r is that rounding when (2r − 1)² · P < 2^48 < (2r + 1)² · P (never equal: P is no power
// of two).
std::array<std::uint16_t, VectorUnit::kReciprocalEntries> make_reciprocal_table() {
  std::array<std::uint16_t, VectorUnit::kReciprocalEntries> table{};
  const Int128 bound = Int128{1} << 48;
  for (std::uint32_t j = 0; j < table.size(); ++j) {
    const Int128 product = Int128{256 + j} * (257 + j);
    auto below = [&](std::uint32_t r) {  // (2r − 1)² · P < 2^48: r − 1/2 lies below the value
      const Int128 odd = 2 * Int128{r} - 1;
      return odd * odd * product < bound;
    };
    std::uint32_t r = 1;  // the entries lie in [2^14, 2^15]: the largest r below, by bisection
    for (std::uint32_t step = 1u << 15; step != 0; step >>= 1)
      if (below(r + step)) r += step;
    table[j] = static_cast<std::uint16_t>(r);
  }
  return table;
}
const std::array<std::uint16_t, VectorUnit::kReciprocalEntries> kReciprocal = make_reciprocal_table();

// The inverse roots of RMSNorm's buckets: the mean square normalised to v in [2^28, 2^30] falls in
// bucket b = ⌊v / 2^22⌋ (at most 255), b in [64, 255], whose entry is 2^30 / √v at the geometric
// mean of the bucket's ends, round(2^19 / (b(b+1))^(1/4)). Found exactly in integers: r is that
// rounding when (2r − 1)^4 · b(b+1) < 2^80 < (2r + 1)^4 · b(b+1), that is r − 1/2 < 2^19 / (b(b+1))^(1/4)
// < r + 1/2 raised to the fourth power (never equal: b(b+1) is no power of two).
constexpr std::uint32_t kFirstBucket = 64, kLastBucket = 255;

std::array<std::uint16_t, VectorUnit::kInverseRootEntries> make_inverse_root_table() {
  std::array<std::uint16_t, VectorUnit::kInverseRootEntries> table{};
  const Int128 bound = Int128{1} << 80;
  for (std::uint32_t bucket = kFirstBucket; bucket <= kLastBucket; ++bucket) {
    const Int128 width = Int128{bucket} * (bucket + 1);
    auto below = [&](std::uint32_t r) {  // (2r − 1)^4 · b(b+1) < 2^80: r − 1/2 lies below the root
      const Int128 odd = 2 * Int128{r} - 1;
      return odd * odd * odd * odd * width < bound;
    };
    std::uint32_t r = 1;  // the entries lie in [2^15, 2^16]: the largest r below, by bisection
    for (std::uint32_t step = 1u << 16; step != 0; step >>= 1)
      if (below(r + step)) r += step;
    table[bucket - kFirstBucket] = static_cast<std::uint16_t>(r);
  }
  return table;
}
const std::array<std::uint16_t, VectorUnit::kInverseRootEntries> kInverseRoot = make_inverse_root_table();

// SiLU's points: Y[j] = round(silu(u) · 2^9) at u = (128 j − 4096) / 2^9 = (j − 32) / 4, j = 0..64,
// silu(u) = u / (1 + e^(−u)), in long double (no value lies within 0.02 of a half).
constexpr std::int32_t kSiluSegment = 128;  // the points' spacing in Q9: 2^7
constexpr int kSiluSegmentBits = 7;

std::array<std::int16_t, VectorUnit::kSiluPoints> make_silu_table() {
  std::array<std::int16_t, VectorUnit::kSiluPoints> table{};
  const long double scale = std::ldexp(1.0L, kFracH);
  for (std::size_t j = 0; j < table.size(); ++j) {
    const std::int64_t point = kSiluSegment * static_cast<std::int64_t>(j) + kActivationLow;  // in Q9
    const long double u = static_cast<long double>(point) / scale;
    table[j] = static_cast<std::int16_t>(std::llround(u / (1.0L + std::exp(-u)) * scale));
  }
  return table;
}
const std::array<std::int16_t, VectorUnit::kSiluPoints> kSilu = make_silu_table();

// SiLU of one Q9 value (story_silu): the value clamped to 13 bits, then the line between the two
// points around it.
std::int16_t silu_q9(std::int16_t h) {
  const std::int64_t offset = to_activation(h) - kActivationLow;  // in [0, 8191]
  const auto segment = static_cast<std::size_t>(offset / kSiluSegment);
  const std::int64_t rise = std::int64_t{kSilu[segment + 1]} - kSilu[segment];
  const std::int64_t along = offset - kSiluSegment * static_cast<std::int64_t>(segment);
  return to_activation(kSilu[segment] + round_shift(rise * along, kSiluSegmentBits));
}

}  // namespace

// A matrix operand: `rows` requantisation pairs {multiplier, shift} from `address`, then from the
// next WM line its int8 rows, each padded to whole lines. Byte addresses in 64 bits, so that no
// operand wraps around.
struct VectorUnit::Matrix {
  std::uint32_t address = 0, rows = 0, columns = 0;

  static std::uint64_t padded_to_lines(std::uint64_t bytes) {
    return (bytes + kWeightLineBytes - 1) / kWeightLineBytes * kWeightLineBytes;
  }
  std::uint64_t pair(std::uint32_t row) const { return std::uint64_t{address} + kPairBytes * std::uint64_t{row}; }
  std::uint64_t row_weights(std::uint32_t row) const {
    return padded_to_lines(pair(rows)) + std::uint64_t{row} * padded_to_lines(columns);
  }
  std::uint64_t end() const { return row_weights(rows); }
};

std::span<const std::uint16_t, VectorUnit::kInverseRootEntries> VectorUnit::inverse_root_table() {
  return kInverseRoot;
}

std::span<const std::int16_t, VectorUnit::kSiluPoints> VectorUnit::silu_table() { return kSilu; }

std::span<const std::uint16_t, VectorUnit::kExp2Entries> VectorUnit::exp2_table() { return kExp2; }

std::span<const std::uint16_t, VectorUnit::kReciprocalEntries> VectorUnit::reciprocal_table() { return kReciprocal; }

VectorUnit::VectorUnit(bool present, std::span<const std::uint8_t> weights)
    : weights_(present ? kWeightBytes : 0),
      activations_(present ? kActivationElements : 0),
      keys_(present ? kKvSlots * kKvElements : 0),
      values_(present ? kKvSlots * kKvElements : 0) {
  if (!present && !weights.empty()) fail("the program's vector weight memory needs a map with the vector unit");
  if (weights.size() > weights_.size())
    fail("the program's vector weight memory ({} bytes) does not fit its {}-byte memory", weights.size(), kWeightBytes);
  std::copy(weights.begin(), weights.end(), weights_.begin());
}

bool VectorUnit::in_activations(std::uint64_t first, std::uint64_t count) {
  return first + count <= kActivationElements;
}

bool VectorUnit::in_weights(std::uint64_t first, std::uint64_t count) { return first + count <= kWeightBytes; }

bool VectorUnit::execute(Op op, std::uint32_t rs1, std::uint32_t rs2, std::uint32_t& rd) {
  if (weights_.empty()) return false;  // no unit: every instruction is illegal
  switch (op) {
    case Op::kVuSetvl:
    case Op::kVuSetcols:
    case Op::kVuSetsrc:
    case Op::kVuSetaux:
    case Op::kVuSeths:
      registers_[static_cast<std::size_t>(op) - static_cast<std::size_t>(Op::kVuSetvl)] = rs1;
      return true;
    case Op::kVuPut:
      if (!in_activations(rs1, 1) || !is_element(static_cast<std::int32_t>(rs2))) return false;
      put(rs1, static_cast<std::int16_t>(rs2));
      return true;
    case Op::kVuGet:
      if (!in_activations(rs1, 1)) return false;
      rd = static_cast<std::uint32_t>(std::int32_t{activations_[rs1]});
      return true;
    case Op::kVuWget:
      if (rs1 % 4 != 0 || !in_weights(rs1, 4)) return false;
      rd = static_cast<std::uint32_t>(weight_word(rs1));
      return true;
    case Op::kVuMatvec16: return matvec(rs1, rs2);
    case Op::kVuRow16: return row16(rs1, rs2);
    case Op::kVuAdd16: return add16(rs1, rs2);
    case Op::kVuMul16: return mul16(rs1, rs2);
    case Op::kVuRmsnorm: return rmsnorm(rs1, rs2);
    case Op::kVuSilu: return silu(rs1);
    case Op::kVuRope: return rope(rs1, rs2);
    case Op::kVuAttend: return attend(rs1, rs2);
    case Op::kVuKput: return put_kv(keys_, rs1, rs2);
    case Op::kVuVput: return put_kv(values_, rs1, rs2);
    case Op::kVuArgmax: return argmax(rs1, rd);
    default: return false;
  }
}

std::int32_t VectorUnit::weight_word(std::uint32_t address) const {
  std::int32_t word;
  std::memcpy(&word, weights_.data() + address, 4);
  return word;
}

std::int16_t VectorUnit::weight_half(std::uint32_t address) const {
  std::int16_t half;
  std::memcpy(&half, weights_.data() + address, 2);
  return half;
}

// A write replaces a whole half-row in the weights, so vu.put gathers a line and commits it at the
// line's last element.
void VectorUnit::put(std::uint32_t element, std::int16_t value) {
  line_[element % kLineElements] = value;
  if (element % kLineElements == kLineElements - 1)
    std::copy(line_.begin(), line_.end(), activations_.begin() + (element - (kLineElements - 1)));
}

bool VectorUnit::in_one_row(std::uint32_t first, std::uint32_t count) {
  return first % kBankRowElements == 0 && first % kAmRowElements + std::uint64_t{count} <= kAmRowElements &&
         in_activations(first, count);
}

bool VectorUnit::whole_lines(std::uint32_t first, std::uint32_t count) {
  return first % kLineElements == 0 && in_activations(first, (std::uint64_t{count} + kLineElements - 1) / kLineElements * kLineElements);
}

// Line l of x and of y are in banks of opposite parity (bank = line[3:1]), or are the same line.
bool VectorUnit::paired_lines(std::uint32_t x, std::uint32_t y) {
  return x == y || ((x - y) & (4 * kLineElements - 1)) == 2 * kLineElements;
}

void VectorUnit::write_lines(std::uint32_t out, std::uint32_t count, const std::function<std::int16_t(std::uint32_t)>& element) {
  for (std::uint32_t first = 0; first < count; first += kLineElements) {
    for (std::uint32_t k = 0; k < kLineElements; ++k) line_[k] = first + k < count ? element(first + k) : 0;
    std::copy(line_.begin(), line_.end(), activations_.begin() + out + first);
  }
}

void VectorUnit::write_result(std::uint32_t first) {
  std::copy(result_.begin(), result_.end(), activations_.begin() + first);
}

bool VectorUnit::valid_pair(std::uint64_t address) const {
  const auto multiplier = static_cast<std::uint32_t>(weight_word(static_cast<std::uint32_t>(address)));
  const auto shift = static_cast<std::uint32_t>(weight_word(static_cast<std::uint32_t>(address) + 4));
  return in_range(multiplier, 0, kMaxMultiplier) && in_range(shift, kMinShift, kMaxShift);
}

bool VectorUnit::matrix_at(std::uint32_t address, Matrix& matrix) const {
  matrix = {.address = address, .rows = registers_[kVl], .columns = registers_[kCols]};
  return address % kWeightLineBytes == 0 && in_range(matrix.rows, 1, kMaxCount) &&
         in_range(matrix.columns, 1, kMaxColumns);
}

// out[i] = requant(Σ_j w[i][j] · x[j], pair i) for every row, x at AM[SRC], a line of rows at a time
// (matvec_requantise reads the pairs). The weights read x as one AM row, an even bank's and the
// next's (their read-outs feed the row product as they stand), so it is a multiple of 64 within a
// row of 256 elements, and each output line from x as it stands. The sum is exact in 64 bits (the
// header's int32 holds it for weights above −128).
bool VectorUnit::matvec(std::uint32_t out, std::uint32_t address) {
  Matrix m;
  const std::uint32_t x = registers_[kSrc];
  if (!matrix_at(address, m) || !in_weights(m.address, m.end() - m.address) || x % kMatrixInputAlign != 0 ||
      !in_one_row(x, m.columns) || !whole_lines(out, m.rows))
    return false;
  write_lines(out, m.rows, [&](std::uint32_t row) {
    const auto* w = reinterpret_cast<const std::int8_t*>(weights_.data() + m.row_weights(row));
    std::int64_t acc = 0;
    for (std::uint32_t j = 0; j < m.columns; ++j) acc += std::int32_t{w[j]} * activations_[x + j];
    return matvec_requantise(acc, weight_word(m.pair(row)), weight_word(m.pair(row) + 4));
  });
  return true;
}

// A row of weights requantised as it stands (an embedding lookup): VL weights from the WM line at
// `row`, by the pair at WM AUX, into AM a line at a time. The weights read the pair and the row in
// passes of their own, each a WM line.
bool VectorUnit::row16(std::uint32_t out, std::uint32_t row) {
  const std::uint32_t n = count(), pair = registers_[kAux];
  if (!in_range(n, 1, kMaxRowLength) || row % kWeightLineBytes != 0 || !in_weights(row, kWeightLineBytes) ||
      pair % kPairBytes != 0 || !in_weights(pair, kPairBytes) || !whole_lines(out, n) || !valid_pair(pair))
    return false;
  const std::int32_t multiplier = weight_word(pair), shift = weight_word(pair + 4);
  const auto* w = reinterpret_cast<const std::int8_t*>(weights_.data() + row);
  write_lines(out, n, [&](std::uint32_t j) { return to_activation(requantise(w[j], multiplier, shift)); });
  return true;
}

bool VectorUnit::add16(std::uint32_t x, std::uint32_t y) {
  const std::uint32_t n = count();
  if (!in_range(n, 1, kMaxCount) || !whole_lines(x, n) || !whole_lines(y, n) || !paired_lines(x, y)) return false;
  write_lines(x, n, [&](std::uint32_t i) { return to_activation(std::int64_t{activations_[x + i]} + activations_[y + i]); });
  return true;
}

bool VectorUnit::mul16(std::uint32_t a, std::uint32_t b) {
  const std::uint32_t n = count(), shift = registers_[kAux];
  if (!in_range(n, 1, kMaxCount) || !in_range(shift, 1, kMaxMul16Shift) || !whole_lines(a, n) || !whole_lines(b, n) ||
      !paired_lines(a, b))
    return false;
  write_lines(a, n, [&](std::uint32_t i) {
    const std::int64_t product = std::int64_t{activations_[a + i]} * activations_[b + i];
    return to_activation(round_shift(product, static_cast<int>(shift)));
  });
  return true;
}

// x / rms(x) in Q9 (story_rmsnorm): the mean square (the sum of squares divided by the power of two
// 2^s >= n, plus the epsilon term AUX), at most 2^30, normalised into [2^28, 2^30] by an even shift
// e; its bucket's entry stands for 2^30 / √ of it, and e/2 comes back off the output shift. The
// weights read x as the same row of two adjacent AM banks, a bank a pass, so x is a multiple of 32
// and its n elements lie within one 256-element row; the outputs go a line at a time, each from x as
// it stands.
bool VectorUnit::rmsnorm(std::uint32_t out, std::uint32_t x) {
  const std::uint32_t n = count();
  if (!in_range(n, 1, kMaxNormLength) || !in_one_row(x, n) || !whole_lines(out, n)) return false;
  const int s = std::bit_width(n - 1);  // the smallest s with n <= 2^s
  std::uint64_t squares = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::int64_t value = activations_[x + i];
    squares += static_cast<std::uint64_t>(value * value);
  }
  std::uint64_t sum = registers_[kAux] + (squares >> s);
  constexpr std::uint64_t kCeiling = std::uint64_t{1} << 30, kFloor = std::uint64_t{1} << 28;
  sum = std::clamp<std::uint64_t>(sum, 1, kCeiling);
  int e = 0;
  while ((sum << e) < kFloor) e += 2;
  const std::uint64_t bucket = std::min<std::uint64_t>((sum << e) >> 22, kLastBucket);
  const std::int64_t inverse = kInverseRoot[bucket - kFirstBucket];
  const int shift = 30 - kFracNorm - e / 2;
  write_lines(out, n, [&](std::uint32_t i) { return to_activation(round_shift(activations_[x + i] * inverse, shift)); });
  return true;
}

bool VectorUnit::silu(std::uint32_t x) {
  const std::uint32_t n = count();
  if (!in_range(n, 1, kMaxCount) || !whole_lines(x, n)) return false;
  write_lines(x, n, [&](std::uint32_t i) { return silu_q9(activations_[x + i]); });
  return true;
}

// A line at a time: pair p of a line (elements 2p and 2p + 1, p < 8) rotated by the Q14 cosine
// and sine p of the table at WM `table`, a multiple of its 32 bytes (8 int16 cosines, then 8 sines).
bool VectorUnit::rope(std::uint32_t x, std::uint32_t table) {
  const std::uint32_t n = count();
  if (!in_range(n, 1, kMaxCount) || n % 2 != 0 || !whole_lines(x, n) || table % kRopeTableBytes != 0 ||
      !in_weights(table, kRopeTableBytes))
    return false;
  write_lines(x, n, [&](std::uint32_t i) {
    const std::uint32_t first = i & ~1u, entry = first % kLineElements;  // the pair's byte offset in each half
    const std::int64_t cos = weight_half(table + entry), sin = weight_half(table + kRopeTableBytes / 2 + entry);
    const std::int64_t a = activations_[x + first], b = activations_[x + first + 1];
    return to_activation(round_shift(i % 2 == 0 ? a * cos - b * sin : a * sin + b * cos, kFracRope));
  });
  return true;
}

// The kKvElements elements of AM from `x` into KV slot `slot` of `cache` (its keys or its values).
// The weights read them in one pass as a row of one AM bank, so `x` is a multiple of kKvElements.
bool VectorUnit::put_kv(std::vector<std::int16_t>& cache, std::uint32_t x, std::uint32_t slot) {
  if (x % kKvElements != 0 || slot >= kKvSlots || !in_activations(x, kKvElements)) return false;
  std::copy_n(activations_.data() + x, kKvElements, cache.data() + std::size_t{slot} * kKvElements);
  return true;
}

// The running softmax of one attention head: the largest score so far, the sum of the powers and
// the weighted values, each term scaled to 2^(score − largest) in Q15.
// One attention head (story_attention_head): VL positions, position t's key the HS elements of KV
// slot SRC + t's key vector from element AUX, its value the same of the slot's value vector; the
// query at AM[q] and the output at AM[out]. The
// softmax is in base 2, computed as the unit in the weights takes it, a block of kAttentionBlock
// positions a pass: the anchor (the largest score rounded up to an eighth of a log2 unit), the level
// of the weights' sum, the weights' sum itself and each output's running sum, block after block, then
// each output divided by the sum through the reciprocal table.
bool VectorUnit::attend(std::uint32_t out, std::uint32_t q) {
  const std::uint32_t positions = count(), head_size = registers_[kHs];
  const std::uint32_t first_slot = registers_[kSrc], offset = registers_[kAux];
  if (!in_range(positions, 1, kMaxPositions) || !in_range(head_size, 1, kMaxAttentionHeadSize)) return false;
  if (std::uint64_t{first_slot} + positions > kKvSlots || std::uint64_t{offset} + head_size > kKvElements ||
      !in_activations(q, head_size) || !in_activations(out, head_size))
    return false;
  auto at = [&](std::uint32_t t) { return (std::size_t{first_slot} + t) * kKvElements + offset; };
  constexpr std::int64_t kEighth = std::int64_t{1} << (2 * kFracQ - 3);  // of a log2 unit, in Q14 scores
  constexpr std::int64_t kHighPartLimit = 1 << 14, kLowestAnchor = -1536;
  constexpr int kMassFrac = 7, kWeightFrac = 10, kRunningShift = 11;
  auto value = [&](std::uint32_t t, std::uint32_t i) { return std::int64_t{values_[at(t) + i]}; };
  auto floor_div = [](std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  std::vector<std::int64_t> scores(positions);
  for (std::uint32_t t = 0; t < positions; ++t) {
    const std::int16_t* key = keys_.data() + at(t);
    // The score as its keys' bits 6 and up and 0..5 give it, the first part clamped.
    std::int64_t high = 0, low = 0;
    for (std::uint32_t i = 0; i < head_size; ++i) {
      const std::int64_t query = activations_[q + i], k = key[i];
      high += query * floor_div(k, 64);
      low += query * (k - 64 * floor_div(k, 64));
    }
    scores[t] = 64 * std::clamp(high, -kHighPartLimit, kHighPartLimit) + low;
  }
  auto blocks = [&](auto&& per_block) {
    for (std::uint32_t first = 0; first < positions; first += kAttentionBlock)
      per_block(first, std::min(positions, first + kAttentionBlock));
  };

  std::int64_t anchor = kLowestAnchor;
  blocks([&](std::uint32_t first, std::uint32_t end) {
    anchor = std::max(anchor, -floor_div(-*std::max_element(scores.begin() + first, scores.begin() + end), kEighth));
  });
  std::vector<std::int64_t> below(positions);  // eighths of a log2 unit under the anchor, rounded
  for (std::uint32_t t = 0; t < positions; ++t) below[t] = floor_div(anchor * kEighth - scores[t] + kEighth / 2, kEighth);
  auto weight = [&](std::int64_t eighths, int frac) { return pow2_eighths(8 * frac - eighths); };

  // The level m of the weights' sum S in Q7, block by block: the levels 2^7 · 2^(m/8) whose geometric
  // means with their neighbours S passes.
  auto level_value = [](std::int64_t m) { return pow2_eighths(8 * kMassFrac + m); };
  std::int64_t level = -1;
  blocks([&](std::uint32_t first, std::uint32_t end) {
    std::int64_t sum = level < 0 ? 0 : level_value(level);
    for (std::uint32_t t = first; t < end; ++t) sum += weight(below[t], kMassFrac);
    level = 0;
    while (sum * sum >= level_value(level) * level_value(level + 1)) ++level;
  });

  std::vector<std::int64_t> p(positions);
  std::int64_t total = 0;
  for (std::uint32_t t = 0; t < positions; ++t) total += p[t] = weight(below[t] + level, kWeightFrac);
  total = std::min<std::int64_t>(total, kActivationHigh);
  result_.assign(head_size, 0);
  if (total > 0) {
    const int top = std::bit_width(static_cast<std::uint64_t>(total)) - 1;
    const std::int64_t reciprocal = kReciprocal[static_cast<std::size_t>((total << 8 >> top) - 256)];
    for (std::uint32_t i = 0; i < head_size; ++i) {
      std::int64_t running = 0;
      blocks([&](std::uint32_t first, std::uint32_t end) {
        std::int64_t sum = 0;
        for (std::uint32_t t = first; t < end; ++t) sum += p[t] * value(t, i);
        running = to_activation(running + round_shift(sum, kRunningShift));
      });
      result_[i] = to_activation(round_shift(running * reciprocal, 15 + top - kRunningShift));
    }
  }
  write_result(out);
  return true;
}

// The first index of the largest of the VL elements at AM[x].
bool VectorUnit::argmax(std::uint32_t x, std::uint32_t& index) const {
  const std::uint32_t n = count();
  if (!in_range(n, 1, kMaxCount) || !whole_lines(x, n)) return false;
  std::uint32_t best = 0;
  for (std::uint32_t i = 1; i < n; ++i)
    if (activations_[x + i] > activations_[x + best]) best = i;
  index = best;
  return true;
}

}  // namespace rvformer::emulator
