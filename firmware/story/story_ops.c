/* firmware/story/story_ops.c — the reference implementation of the integer operations defined in
 * story_ops.h (semantics there); plain C for the host and for RV32IM. */
#include "story_ops.h"

static int64_t round_shift(int64_t v, int shift) { return (v + ((int64_t)1 << (shift - 1))) >> shift; }

static int16_t sat13(int64_t v) { return (int16_t)(v < STORY_ACT_MIN ? STORY_ACT_MIN : v > STORY_ACT_MAX ? STORY_ACT_MAX : v); }

int16_t story_requant13(int64_t acc, StoryRequant r) { return sat13(round_shift(acc * r.multiplier, r.shift)); }

static int32_t dot8x16(const int8_t* w, const int16_t* x, int n) {
  int32_t acc = 0;
  for (int j = 0; j < n; ++j) acc += (int32_t)w[j] * x[j];
  return acc;
}

void story_matvec16(int16_t* out, const int8_t* w, int stride, const StoryRequant* r, const int16_t* x, int rows,
                    int cols) {
  for (int i = 0; i < rows; ++i) out[i] = story_requant13(dot8x16(w + (long)i * stride, x, cols), r[i]);
}

void story_add16(int16_t* x, const int16_t* y, int n) {
  for (int i = 0; i < n; ++i) x[i] = sat13((int32_t)x[i] + y[i]);
}

void story_mul16(int16_t* out, const int16_t* a, const int16_t* b, int shift, int n) {
  for (int i = 0; i < n; ++i) out[i] = sat13(round_shift((int32_t)a[i] * b[i], shift));
}

const uint16_t STORY_RSQRT[STORY_RSQRT_ENTRIES] = {
    65282, 64782, 64293, 63815, 63348, 62890, 62443, 62004, 61575, 61155, 60743, 60339, 59944, 59556, 59175, 58802,
    58435, 58076, 57723, 57376, 57036, 56701, 56372, 56049, 55732, 55419, 55112, 54810, 54513, 54221, 53933, 53650,
    53371, 53097, 52827, 52561, 52299, 52040, 51786, 51535, 51288, 51044, 50804, 50567, 50334, 50103, 49876, 49652,
    49431, 49212, 48997, 48784, 48575, 48367, 48163, 47961, 47762, 47565, 47370, 47178, 46988, 46800, 46615, 46432,
    46251, 46072, 45895, 45720, 45547, 45376, 45207, 45040, 44875, 44712, 44550, 44390, 44232, 44075, 43920, 43767,
    43615, 43465, 43316, 43169, 43024, 42880, 42737, 42596, 42456, 42317, 42180, 42044, 41910, 41776, 41644, 41514,
    41384, 41256, 41129, 41003, 40878, 40754, 40632, 40510, 40390, 40270, 40152, 40035, 39919, 39803, 39689, 39576,
    39464, 39352, 39242, 39133, 39024, 38916, 38810, 38704, 38599, 38495, 38391, 38289, 38187, 38086, 37986, 37887,
    37788, 37690, 37593, 37497, 37402, 37307, 37213, 37119, 37027, 36935, 36843, 36753, 36663, 36573, 36485, 36397,
    36309, 36223, 36136, 36051, 35966, 35882, 35798, 35715, 35632, 35550, 35469, 35388, 35307, 35228, 35148, 35070,
    34991, 34914, 34837, 34760, 34684, 34608, 34533, 34458, 34384, 34310, 34237, 34164, 34092, 34020, 33949, 33878,
    33807, 33737, 33668, 33599, 33530, 33461, 33393, 33326, 33259, 33192, 33126, 33060, 32994, 32929, 32864, 32800};

StoryNormScale story_rmsnorm_scale(const int16_t* x, int n, uint32_t eps_term) {
  int s = 0;
  while ((1 << s) < n) ++s;
  uint64_t squares = (uint64_t)eps_term << s;
  for (int i = 0; i < n; ++i) squares += (uint32_t)((int32_t)x[i] * x[i]);
  uint64_t ss = squares >> s;
  const uint64_t limit = (uint64_t)1 << 30;
  if (ss > limit) ss = limit;
  if (ss == 0) ss = 1;
  int e = 0;
  while ((ss << e) < ((uint64_t)1 << 28)) e += 2;
  uint64_t bucket = (ss << e) >> 22;
  if (bucket > 255) bucket = 255;
  const StoryNormScale scale = {(int)bucket - 64, e / 2};
  return scale;
}

int16_t story_rmsnorm_element(int16_t x, StoryNormScale scale) {
  return sat13(round_shift((int64_t)x * STORY_RSQRT[scale.entry], 30 - STORY_FRAC_NORM - scale.half_e));
}

void story_rmsnorm(int16_t* out, const int16_t* x, int n, uint32_t eps_term) {
  const StoryNormScale scale = story_rmsnorm_scale(x, n, eps_term);
  for (int i = 0; i < n; ++i) out[i] = story_rmsnorm_element(x[i], scale);
}

const uint16_t STORY_EXP2[STORY_EXP2_ENTRIES] = {32768, 30048, 27554, 25268, 23170, 21247, 19484, 17867};

int64_t story_pow2_eighths(int32_t x) {
  const int32_t a = x >= 0 ? (x + 7) / 8 : -(-x / 8);
  const int32_t b = 8 * a - x;
  if (a >= 15) return (int64_t)STORY_EXP2[b] << (a - 15);
  return 15 - a > 62 ? 0 : round_shift(STORY_EXP2[b], 15 - a);
}

const int16_t STORY_SILU[STORY_SILU_POINTS] = {
    -1,   -2,   -2,   -3,   -3,   -4,   -5,   -6,   -8,   -9,   -11,  -14,  -17,  -21,  -25,  -31,  -37,
    -44,  -53,  -62,  -73,  -85,  -97,  -110, -122, -133, -140, -143, -138, -123, -97,  -56,  0,    72,
    159,  261,  374,  497,  628,  763,  902,  1042, 1183, 1323, 1463, 1602, 1739, 1876, 2011, 2145, 2279,
    2411, 2543, 2674, 2805, 2935, 3064, 3194, 3323, 3452, 3581, 3709, 3838, 3966, 4095};

void story_silu(int16_t* out, const int16_t* h, int n) {
  for (int i = 0; i < n; ++i) {
    const int32_t offset = sat13(h[i]) - STORY_ACT_MIN;
    const int j = offset >> 7;
    const int32_t step = STORY_SILU[j + 1] - STORY_SILU[j];
    out[i] = sat13(STORY_SILU[j] + round_shift(step * (offset - (j << 7)), 7));
  }
}

void story_rope(int16_t* x, const int16_t* cos, const int16_t* sin, int n, int head_size) {
  for (int i = 0; i < n; i += 2) {
    int j = (i % head_size) / 2;
    int64_t a = x[i], b = x[i + 1];  /* a·sin + b·cos reaches 2^31 */
    x[i] = sat13(round_shift(a * cos[j] - b * sin[j], STORY_FRAC_ROPE));
    x[i + 1] = sat13(round_shift(a * sin[j] + b * cos[j], STORY_FRAC_ROPE));
  }
}

const uint16_t STORY_RECIP[STORY_RECIP_ENTRIES] = {
    32704, 32577, 32451, 32326, 32202, 32079, 31957, 31835, 31715, 31596, 31477, 31359, 31243, 31127, 31012, 30897,
    30784, 30671, 30560, 30449, 30339, 30229, 30121, 30013, 29906, 29800, 29694, 29589, 29485, 29382, 29280, 29178,
    29077, 28976, 28876, 28777, 28679, 28581, 28484, 28388, 28292, 28197, 28103, 28009, 27916, 27823, 27731, 27640,
    27549, 27459, 27369, 27280, 27192, 27104, 27016, 26930, 26844, 26758, 26673, 26588, 26504, 26421, 26338, 26255,
    26174, 26092, 26011, 25931, 25851, 25771, 25693, 25614, 25536, 25459, 25382, 25305, 25229, 25153, 25078, 25003,
    24929, 24855, 24782, 24709, 24636, 24564, 24492, 24421, 24350, 24280, 24210, 24140, 24071, 24002, 23933, 23865,
    23797, 23730, 23663, 23597, 23530, 23465, 23399, 23334, 23269, 23205, 23141, 23077, 23014, 22951, 22888, 22826,
    22764, 22703, 22641, 22580, 22520, 22459, 22400, 22340, 22281, 22221, 22163, 22104, 22046, 21989, 21931, 21874,
    21817, 21760, 21704, 21648, 21592, 21537, 21482, 21427, 21372, 21318, 21264, 21210, 21157, 21103, 21050, 20998,
    20945, 20893, 20841, 20790, 20738, 20687, 20636, 20586, 20535, 20485, 20435, 20385, 20336, 20287, 20238, 20189,
    20141, 20092, 20044, 19997, 19949, 19902, 19855, 19808, 19761, 19715, 19668, 19622, 19577, 19531, 19486, 19441,
    19396, 19351, 19306, 19262, 19218, 19174, 19130, 19087, 19043, 19000, 18957, 18915, 18872, 18830, 18787, 18746,
    18704, 18662, 18621, 18579, 18538, 18497, 18457, 18416, 18376, 18336, 18296, 18256, 18216, 18177, 18138, 18098,
    18059, 18021, 17982, 17944, 17905, 17867, 17829, 17791, 17754, 17716, 17679, 17642, 17605, 17568, 17531, 17494,
    17458, 17422, 17386, 17350, 17314, 17278, 17243, 17207, 17172, 17137, 17102, 17067, 17033, 16998, 16964, 16930,
    16895, 16862, 16828, 16794, 16760, 16727, 16694, 16661, 16628, 16595, 16562, 16529, 16497, 16464, 16432, 16400};

/* The anchor's grid, an eighth of a log2 unit in Q(2 * STORY_FRAC_Q) scores; the bound of a score's
 * high part (its keys' bits 6 and up), and the anchor below every score. */
#define ANCHOR_GRID ((int64_t)1 << (2 * STORY_FRAC_Q - 3))
#define HIGH_PART_LIMIT ((int64_t)1 << 14)
#define LOWEST_ANCHOR (-1536)

static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

static int64_t weight(int64_t u, int frac) { return story_pow2_eighths((int32_t)(8 * frac - u)); }

static int64_t mass_back(int level) { return level < 0 ? 0 : story_pow2_eighths(56 + level); }

static int mass_level(int64_t sum) {
  int level = 0;
  while (sum * sum >= mass_back(level) * mass_back(level + 1)) ++level;
  return level;
}

void story_attention_head(int16_t* out, const int16_t* q, const int16_t* keys, const int16_t* values, int len,
                          int stride, int head_size) {
  /* Scores and the eighths below the anchor for at most 512 positions (vu.attend's limit). */
  int64_t score[512], below[512];
  int64_t anchor = LOWEST_ANCHOR;
  for (int t = 0; t < len; ++t) {
    const int16_t* k = keys + (long)t * stride;
    int64_t high = 0, low = 0;
    for (int i = 0; i < head_size; ++i) {
      high += (int64_t)q[i] * (k[i] >> 6);
      low += (int64_t)q[i] * (k[i] & 63);
    }
    high = high < -HIGH_PART_LIMIT ? -HIGH_PART_LIMIT : high > HIGH_PART_LIMIT ? HIGH_PART_LIMIT : high;
    score[t] = 64 * high + low;
  }
  for (int first = 0; first < len; first += STORY_ATTENTION_BLOCK) {
    int64_t largest = score[first];
    for (int t = first + 1; t < len && t < first + STORY_ATTENTION_BLOCK; ++t)
      if (score[t] > largest) largest = score[t];
    const int64_t level = -floor_div(-largest, ANCHOR_GRID);
    if (level > anchor) anchor = level;
  }
  for (int t = 0; t < len; ++t) below[t] = floor_div(anchor * ANCHOR_GRID - score[t] + ANCHOR_GRID / 2, ANCHOR_GRID);
  int mass = -1;
  for (int first = 0; first < len; first += STORY_ATTENTION_BLOCK) {
    int64_t sum = mass_back(mass);
    for (int t = first; t < len && t < first + STORY_ATTENTION_BLOCK; ++t) sum += weight(below[t], 7);
    mass = mass_level(sum);
  }
  /* The scores are no longer needed: their place takes the weights p_t. */
  int64_t* p = score;
  int64_t total = 0;
  for (int t = 0; t < len; ++t) total += p[t] = weight(below[t] + mass, 10);
  if (total > STORY_ACT_MAX) total = STORY_ACT_MAX;
  int e = 0;
  while ((total >> (e + 1)) != 0) ++e;
  for (int i = 0; i < head_size; ++i) {
    int64_t running = 0;
    for (int first = 0; first < len; first += STORY_ATTENTION_BLOCK) {
      int64_t sum = 0;
      for (int t = first; t < len && t < first + STORY_ATTENTION_BLOCK; ++t) sum += p[t] * values[(long)t * stride + i];
      running = sat13(running + round_shift(sum, 11));
    }
    out[i] = total == 0 ? 0 : sat13(round_shift(running * STORY_RECIP[((total << 8) >> e) - 256], 4 + e));
  }
}

int story_argmax16(const int16_t* x, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  return best;
}
