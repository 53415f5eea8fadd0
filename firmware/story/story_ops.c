/* firmware/story/story_ops.c — the reference implementation of the integer operations defined in
 * story_ops.h (semantics there); plain C for the host and for RV32IM. */
#include "story_ops.h"

static int64_t round_shift(int64_t v, int shift) { return (v + ((int64_t)1 << (shift - 1))) >> shift; }

static int16_t sat13(int64_t v) { return (int16_t)(v < STORY_ACT_MIN ? STORY_ACT_MIN : v > STORY_ACT_MAX ? STORY_ACT_MAX : v); }

static int32_t sat32(int64_t v) { return (int32_t)(v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : v); }

int16_t story_requant13(int64_t acc, StoryRequant r) { return sat13(round_shift(acc * r.multiplier, r.shift)); }

int32_t story_requant32(int64_t acc, StoryRequant r) { return sat32(round_shift(acc * r.multiplier, r.shift)); }

static int32_t dot8x16(const int8_t* w, const int16_t* x, int n) {
  int32_t acc = 0;
  for (int j = 0; j < n; ++j) acc += (int32_t)w[j] * x[j];
  return acc;
}

void story_matvec16(int16_t* out, const int8_t* w, const StoryRequant* r, const int16_t* x, int rows, int cols) {
  for (int i = 0; i < rows; ++i) out[i] = story_requant13(dot8x16(w + (long)i * cols, x, cols), r[i]);
}

void story_matvec32(int32_t* out, const int8_t* w, const StoryRequant* r, const int16_t* x, int rows, int cols) {
  for (int i = 0; i < rows; ++i) out[i] = story_requant32(dot8x16(w + (long)i * cols, x, cols), r[i]);
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

void story_rmsnorm(int16_t* out, const int16_t* x, int n, uint32_t eps_term) {
  int s = 0;
  while ((1 << s) < n) ++s;
  uint64_t ss = eps_term;
  for (int i = 0; i < n; ++i) ss += (uint32_t)((int32_t)x[i] * x[i]) >> s;
  const uint64_t limit = (uint64_t)1 << 30;
  if (ss > limit) ss = limit;
  if (ss == 0) ss = 1;
  int e = 0;
  while ((ss << e) < ((uint64_t)1 << 28)) e += 2;
  uint64_t bucket = (ss << e) >> 22;
  if (bucket > 255) bucket = 255;
  const int64_t inv = STORY_RSQRT[bucket - 64];
  const int shift = 30 - STORY_FRAC_NORM - e / 2;
  for (int i = 0; i < n; ++i) out[i] = sat13(round_shift(x[i] * inv, shift));
}

/* E[k] = round(2^(-k/64) * 2^24), k = 0..64. */
static const int32_t kExp2Table[65] = {
    16777216, 16596492, 16417715, 16240863, 16065917, 15892855, 15721658, 15552304, 15384775, 15219050, 15055111,
    14892937, 14732511, 14573813, 14416824, 14261526, 14107901, 13955931, 13805598, 13656884, 13509772, 13364245,
    13220286, 13077877, 12937002, 12797645, 12659789, 12523418, 12388516, 12255067, 12123055, 11992466, 11863283,
    11735492, 11609078, 11484025, 11360319, 11237946, 11116891, 10997140, 10878679, 10761494, 10645571, 10530897,
    10417458, 10305242, 10194234, 10084422, 9975792,  9868333,  9762032,  9656875,  9552851,  9449948,  9348154,
    9247455,  9147842,  9049301,  8951823,  8855394,  8760003,  8665641,  8572295,  8479954,  8388608};

int32_t story_exp_q15(int32_t x) {
  const int32_t lowest = -(1 << 20);
  if (x < lowest) x = lowest;
  int64_t t = round_shift((int64_t)-x * 94548, 16);
  int n = (int)(t >> 16);
  if (n >= 16) return 0;
  int i = (int)(t >> 10) & 63;
  int32_t f = (int32_t)(t & 1023);
  int32_t p = kExp2Table[i] - (int32_t)round_shift((int64_t)(kExp2Table[i] - kExp2Table[i + 1]) * f, 10);
  return (int32_t)round_shift(p, 9 + n);
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
    int32_t a = x[i], b = x[i + 1];
    x[i] = sat13(round_shift(a * cos[j] - b * sin[j], STORY_FRAC_ROPE));
    x[i + 1] = sat13(round_shift(a * sin[j] + b * cos[j], STORY_FRAC_ROPE));
  }
}

void story_attention_head(int16_t* out, const int16_t* q, const int16_t* keys, const int16_t* values, int len,
                          int stride, int head_size) {
  /* The scores, then the weights, live in one buffer: at most 512 positions (the blob's limit). */
  int32_t weight[512];
  int32_t max = INT32_MIN;
  for (int t = 0; t < len; ++t) {
    const int16_t* k = keys + (long)t * stride;
    int64_t dot = 0;
    for (int i = 0; i < head_size; ++i) dot += (int32_t)q[i] * k[i];
    weight[t] = sat32(dot * (1 << (STORY_FRAC_SCORE - 2 * STORY_FRAC_Q)));
    if (weight[t] > max) max = weight[t];
  }
  uint32_t sum = 0;
  for (int t = 0; t < len; ++t) {
    int64_t d = (int64_t)weight[t] - max;
    weight[t] = story_exp_q15(d < -(1 << 20) ? -(1 << 20) : (int32_t)d);
    sum += (uint32_t)weight[t];
  }
  uint32_t recip = (((uint32_t)1 << 30) + sum / 2) / sum;
  for (int t = 0; t < len; ++t) weight[t] = (int32_t)round_shift((int64_t)weight[t] * recip, 15);
  for (int i = 0; i < head_size; ++i) {
    int64_t acc = 0;
    for (int t = 0; t < len; ++t) acc += weight[t] * values[(long)t * stride + i];
    out[i] = sat13(round_shift(acc, 15));
  }
}

int story_argmax32(const int32_t* x, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  return best;
}
