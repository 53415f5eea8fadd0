/* firmware/story/story_ops.h — the integer operations of the story model's forward pass, each one
 * an operation a vector unit can perform, with its exact semantics: widths, rounding, saturation.
 * The reference (story_ops.c), the RV32 firmware and any future circuit or emulator of the vector
 * unit must agree with these definitions bit for bit (docs/story.md, "Operations").
 *
 * Activations are 13-bit integers held in int16 elements: a circuit's trace token carries one such
 * value, so every operation that produces an activation saturates it to 13 bits. Multipliers are 8
 * bits and the nonlinear steps (the norm's inverse square root, SiLU) read small tables, so that
 * the compiled unit computes them with few neurons (docs/vector-unit.md, "In the weights").
 *
 * Common definitions used below:
 *   round_shift(v, s)  for a 64-bit signed v and 1 <= s <= 62: (v + 2^(s-1)) >> s with an arithmetic
 *                      (flooring) shift, i.e. round to nearest, halves towards +infinity.
 *   sat13(v)           v clamped to [-4096, 4095].
 *   Qn                 a fixed-point number whose integer value is the real value times 2^n.
 * Every intermediate product or sum is exact (computed in 64 bits where 32 could overflow). */
#ifndef STORY_OPS_H
#define STORY_OPS_H

#include <stdint.h>

/* The activations' range: sat13 clamps to [STORY_ACT_MIN, STORY_ACT_MAX]. */
#define STORY_ACT_MIN (-4096)
#define STORY_ACT_MAX 4095

/* Fixed-point formats (fraction bits) of the activations, shared by the quantiser. Each 13-bit format
 * keeps the largest magnitude stories260K reaches in its 512-position greedy run inside the range
 * without saturating (docs/story.md). */
#define STORY_FRAC_X 8      /* residual stream x (|x| < 10 seen) */
#define STORY_FRAC_NORM 9   /* RMSNorm output (|value| <= sqrt(dim) before the folded gain) */
#define STORY_FRAC_Q 7      /* queries (scaled by log2(e)/sqrt(head_size) in wq) and keys (< 27 seen) */
#define STORY_FRAC_V 10     /* values and the attention output (< 4 seen) */
#define STORY_FRAC_H 9      /* FFN: w1 and w3 outputs and the SiLU output (< 6 seen) */
#define STORY_FRAC_GATED 8  /* silu(w1 x) * w3 x, the input of w2 (< 12 seen) */
#define STORY_FRAC_ROPE 14  /* RoPE cos/sin tables, int16 */
#define STORY_FRAC_LOGIT 7  /* logits (< 24 seen) */

/* The shift of story_mul16 that takes silu(w1 x) (Q(H)) times w3 x (Q(H)) to Q(GATED). */
#define STORY_GATED_SHIFT (2 * STORY_FRAC_H - STORY_FRAC_GATED)

/* Largest vector length of a matrix-vector product: n * 127 * 32768 < 2^31 keeps the int32 sum exact. */
#define STORY_MAX_DOT 512

/* Requantisation parameters of one output row: out = sat(round_shift(acc * multiplier, shift)),
 * multiplier in [0, 255], shift in [1, 62]. The quantiser derives them from the row's weight scale
 * and the input and output formats (its multipliers are in [128, 255]). */
typedef struct {
  int32_t multiplier;
  int32_t shift;
} StoryRequant;

/* requant13: sat13 of round_shift(acc * multiplier, shift), the product exact in 64 bits. */
int16_t story_requant13(int64_t acc, StoryRequant r);

/* Matrix-vector product over int8 rows, row i at w + i*stride (stride >= cols): for each row i < rows,
 *   acc_i = sum_j w[i*stride + j] * x[j]   (int8 * int16, summed exactly in int32: cols <= STORY_MAX_DOT)
 *   out[i] = requant13(acc_i, r[i]) */
void story_matvec16(int16_t* out, const int8_t* w, int stride, const StoryRequant* r, const int16_t* x, int rows,
                    int cols);

/* Elementwise saturating add: x[i] = sat13(x[i] + y[i]). */
void story_add16(int16_t* x, const int16_t* y, int n);

/* Elementwise multiply and requantise: out[i] = sat13(round_shift(a[i] * b[i], shift)), 1 <= shift <= 30. */
void story_mul16(int16_t* out, const int16_t* a, const int16_t* b, int shift, int n);

/* RMSNorm without gain (the quantiser folds the gain into the next matrix's columns), in two
 * parts, as the vector unit in the weights computes it: the scale from the whole vector, then each
 * element from its own value and the scale.
 *   s   = the smallest s >= 0 with n <= 2^s                    (n <= STORY_MAX_DOT)
 *   ss  = min(2^30, floor((eps_term * 2^s + sum_i x[i]^2) / 2^s))   (exact; then 1 if it is 0)
 *   e   = the even e >= 0 that puts v = ss * 2^e in [2^28, 2^30]
 *   i   = min(floor(v / 2^22), 255)                           (in [64, 255])
 *   scale = {i - 64, e / 2}                                   (story_rmsnorm_scale)
 *   inv = STORY_RSQRT[i - 64] = round(2^19 / (i * (i + 1))^(1/4))   (2^30 / sqrt(v) over the bucket:
 *         the inverse root of the geometric mean of its ends; in [2^15, 2^16])
 *   out[i] = sat13(round_shift(x[i] * inv, 30 - STORY_FRAC_NORM - e/2))   (story_rmsnorm_element)
 * that is x / rms(x) in Q(STORY_FRAC_NORM), times sqrt(n / 2^s), which the quantiser also folds into
 * the gain. eps_term is the model's epsilon in units of ss: round(eps * 2^(2*STORY_FRAC_X) * n / 2^s). */
#define STORY_RSQRT_ENTRIES 192
extern const uint16_t STORY_RSQRT[STORY_RSQRT_ENTRIES];
typedef struct {
  int entry;   /* into STORY_RSQRT: 0..191 */
  int half_e;  /* e / 2: 0..14 */
} StoryNormScale;
StoryNormScale story_rmsnorm_scale(const int16_t* x, int n, uint32_t eps_term);
int16_t story_rmsnorm_element(int16_t x, StoryNormScale scale);
void story_rmsnorm(int16_t* out, const int16_t* x, int n, uint32_t eps_term);

/* 2^(x/8) rounded to an integer, for x <= 127, from the powers of one octave:
 *   a = ceil(x / 8), b = 8a - x (0..7)
 *   result = E[b] << (a - 15) if a >= 15, else round_shift(E[b], 15 - a) (0 once 15 - a > 62)
 *   with E[b] = STORY_EXP2[b] = round(2^(-b/8) * 2^15), b = 0..7 */
#define STORY_EXP2_ENTRIES 8
extern const uint16_t STORY_EXP2[STORY_EXP2_ENTRIES];
int64_t story_pow2_eighths(int32_t x);

/* SiLU on Q(STORY_FRAC_H) values, linear between 65 points 0.25 apart:
 *   h   = sat13(h)                       (an int16 element may hold more)
 *   o   = h + 4096;  j = o >> 7          (segment j < 64 of [-8, 8) in Q9)
 *   Y[j] = STORY_SILU[j] = round(silu((128 j - 4096) / 2^9) * 2^9), j = 0..64
 *   out[i] = sat13(Y[j] + round_shift((Y[j+1] - Y[j]) * (o - 128 j), 7)) */
#define STORY_SILU_POINTS 65
extern const int16_t STORY_SILU[STORY_SILU_POINTS];
void story_silu(int16_t* out, const int16_t* h, int n);

/* RoPE rotation of adjacent pairs (x[2j], x[2j+1]) by the angle whose Q14 cosine and sine are
 * cos[j], sin[j], for 2j < n:
 *   x'[2j]   = sat13(round_shift(x[2j] * cos[j] - x[2j+1] * sin[j], 14))
 *   x'[2j+1] = sat13(round_shift(x[2j] * sin[j] + x[2j+1] * cos[j], 14))
 * `head_size` gives the period of the angles: element 2j uses cos[(2j mod head_size) / 2]. */
void story_rope(int16_t* x, const int16_t* cos, const int16_t* sin, int n, int head_size);

/* One attention head over positions 0..len-1 of the cache (key t at keys[t*stride], value t at
 * values[t*stride], each head_size int16), the softmax in base 2 (the quantiser folds log2(e) into
 * wq), as the unit in the weights computes it: it reads STORY_ATTENTION_BLOCK positions a pass and
 * carries one 13-bit value from each block's pass to the next (docs/vector-unit.md, "Attention").
 * A score is exact; the weights are powers of 2^(1/8), relative to an anchor on that grid and
 * normalised by the level of their sum, and the output is corrected by the weights' actual sum:
 *   s_t = 64 * clamp(sum_i q[i] * (k_t[i] >> 6), -2^14, 2^14) + sum_i q[i] * (k_t[i] & 63)
 *                                                   (Q(2 * STORY_FRAC_Q) = Q14, log2 units: the score,
 *                                                   its high part clamped, about +-64 log2 units)
 *   G = 2^11                                        (an eighth of a log2 unit)
 *   anchor  a = -1536, then per block a = max(a, ceil(max_t s_t / G))
 *   u_t = floor((a * G - s_t + G/2) / G)            (eighths of a log2 unit below the anchor, >= 0)
 *   W(u, f) = story_pow2_eighths(8f - u)            (2^(-u/8) in Qf)
 *   mass    m: per block, m = LEVEL(BACK(m) + sum_t W(u_t, 7)), BACK of the first block's m being 0,
 *           BACK(m) = story_pow2_eighths(56 + m)    (2^7 * 2^(m/8)),
 *           LEVEL(S) = the number of k >= 1 with S^2 >= BACK(k - 1) * BACK(k)  (the level nearest in log2)
 *   p_t = W(u_t + m, 10)                            (Q10 weights, summing to about 2^10)
 *   D = sat13(sum_t p_t);  per block R[i] = sat13(R[i] + round_shift(sum_t p_t * v_t[i], 11)), from 0
 *   out[i] = 0 if D = 0; else, with e = floor(log2 D) and j = (D * 2^8 >> e) - 256 (0..255),
 *            sat13(round_shift(R[i] * STORY_RECIP[j], 4 + e))      (R * 2^11 / D: the values' format)
 *   STORY_RECIP[j] = round(2^15 / sqrt((1 + j/256) * (1 + (j+1)/256)))   (about 2^(15+e) / D) */
#define STORY_ATTENTION_BLOCK 32
#define STORY_RECIP_ENTRIES 256
extern const uint16_t STORY_RECIP[STORY_RECIP_ENTRIES];
void story_attention_head(int16_t* out, const int16_t* q, const int16_t* keys, const int16_t* values, int len,
                          int stride, int head_size);

/* The index of the largest value, the first one on ties. */
int story_argmax16(const int16_t* x, int n);

#endif
