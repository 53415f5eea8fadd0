/* firmware/story/story_ops.c — the reference implementation of the integer operations defined in
 * story_ops.h (semantics there); plain C for the host and for RV32IM. */
#include "story_ops.h"

static int64_t round_shift(int64_t v, int shift) { return (v + ((int64_t)1 << (shift - 1))) >> shift; }

static int16_t sat16(int64_t v) { return (int16_t)(v < -32768 ? -32768 : v > 32767 ? 32767 : v); }

static int32_t sat32(int64_t v) { return (int32_t)(v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : v); }

int16_t story_requant16(int64_t acc, StoryRequant r) { return sat16(round_shift(acc * r.multiplier, r.shift)); }

int32_t story_requant32(int64_t acc, StoryRequant r) { return sat32(round_shift(acc * r.multiplier, r.shift)); }

static int32_t dot8x16(const int8_t* w, const int16_t* x, int n) {
  int32_t acc = 0;
  for (int j = 0; j < n; ++j) acc += (int32_t)w[j] * x[j];
  return acc;
}

void story_matvec16(int16_t* out, const int8_t* w, const StoryRequant* r, const int16_t* x, int rows, int cols) {
  for (int i = 0; i < rows; ++i) out[i] = story_requant16(dot8x16(w + (long)i * cols, x, cols), r[i]);
}

void story_matvec32(int32_t* out, const int8_t* w, const StoryRequant* r, const int16_t* x, int rows, int cols) {
  for (int i = 0; i < rows; ++i) out[i] = story_requant32(dot8x16(w + (long)i * cols, x, cols), r[i]);
}

void story_add16(int16_t* x, const int16_t* y, int n) {
  for (int i = 0; i < n; ++i) x[i] = sat16((int32_t)x[i] + y[i]);
}

void story_mul16(int16_t* out, const int16_t* a, const int16_t* b, int shift, int n) {
  for (int i = 0; i < n; ++i) out[i] = sat16(round_shift((int32_t)a[i] * b[i], shift));
}

uint32_t story_isqrt(uint32_t v) {
  uint32_t root = 0;
  uint32_t bit = (uint32_t)1 << 30;
  while (bit > v) bit >>= 2;
  while (bit != 0) {
    if (v >= root + bit) {
      v -= root + bit;
      root = (root >> 1) + bit;
    } else {
      root >>= 1;
    }
    bit >>= 2;
  }
  return root;
}

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
  uint32_t r = story_isqrt((uint32_t)(ss << e));
  int64_t inv = (int64_t)((((uint32_t)1 << 30) + r / 2) / r);
  int shift = 30 - STORY_FRAC_NORM - e / 2;
  for (int i = 0; i < n; ++i) out[i] = sat16(round_shift(x[i] * inv, shift));
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

void story_silu(int16_t* out, const int16_t* h, int n) {
  for (int i = 0; i < n; ++i) {
    int32_t a = h[i] < 0 ? -(int32_t)h[i] : h[i];
    int32_t z = -(a << (16 - STORY_FRAC_H));
    if (z < -(1 << 20)) z = -(1 << 20);
    uint32_t denominator = 32768 + (uint32_t)story_exp_q15(z);
    int32_t sp = (int32_t)((((uint32_t)1 << 30) + denominator / 2) / denominator);
    int32_t sig = h[i] >= 0 ? sp : 32768 - sp;
    out[i] = (int16_t)round_shift((int32_t)h[i] * sig, 15);
  }
}

void story_rope(int16_t* x, const int16_t* cos, const int16_t* sin, int n, int head_size) {
  for (int i = 0; i < n; i += 2) {
    int j = (i % head_size) / 2;
    int32_t a = x[i], b = x[i + 1];
    x[i] = sat16(round_shift(a * cos[j] - b * sin[j], STORY_FRAC_ROPE));
    x[i + 1] = sat16(round_shift(a * sin[j] + b * cos[j], STORY_FRAC_ROPE));
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
    weight[t] = sat32(round_shift(dot, 2 * STORY_FRAC_Q - STORY_FRAC_SCORE));
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
    out[i] = sat16(round_shift(acc, 15));
  }
}

int story_argmax32(const int32_t* x, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  return best;
}
