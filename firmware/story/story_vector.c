/* firmware/story/story_vector.c — the vector unit's build of story_build.h (RVFORMER_VECTOR_UNIT,
 * the emulator-vector map): the blob's header and weights stream into the unit's weight memory (WM)
 * at their blob offsets, so that each matrix is at its offset in the unit's matrix layout; only the
 * vocabulary stays in RAM. The activations and the KV cache live in the activation memory (AM), and
 * every operation of the forward pass is one vu.* instruction (runtime/rvformer_vector.h).
 *
 * AM layout (element addresses, from 0): x, xb, xb2, q [dim each], hb, hb2 [hidden_dim each],
 * logits [vocab_size], then the key cache and the value cache, each
 * [n_layers][seq_len][kv_dim]. */
#ifdef RVFORMER_VECTOR_UNIT

#include <rvformer_vector.h>
#include <stdlib.h>

#include "story_build.h"

/* Hands out `elements` AM elements from *next. */
static uint32_t allocate(uint32_t* next, uint32_t elements) {
  const uint32_t first = *next;
  *next += elements;
  return first;
}

/* Places the state in AM (the layout at the top of this file); returns the elements it takes. */
static uint32_t place_state(StoryState* s, const StoryModel* model) {
  const uint32_t dim = (uint32_t)model->dim, hidden = (uint32_t)model->hidden_dim;
  const uint32_t kv_dim = dim / (uint32_t)model->n_heads * (uint32_t)model->n_kv_heads;
  const uint32_t cache = (uint32_t)model->n_layers * (uint32_t)model->seq_len * kv_dim;
  uint32_t next = 0;
  s->x = allocate(&next, dim);
  s->xb = allocate(&next, dim);
  s->xb2 = allocate(&next, dim);
  s->q = allocate(&next, dim);
  s->hb = allocate(&next, hidden);
  s->hb2 = allocate(&next, hidden);
  s->logits = allocate(&next, (uint32_t)model->vocab_size);
  s->key_cache = allocate(&next, cache);
  s->value_cache = allocate(&next, cache);
  return next;
}

/* What the unit's memories must hold, known from the header before any weight arrives. */
static const char* check_fits_the_unit(const StoryModel* model) {
  if (model->vocabulary_start > VU_WEIGHT_BYTES)
    return "the story model's weights do not fit in the vector unit's weight memory (384 KiB)";
  StoryState state;
  if (place_state(&state, model) > VU_ACTIVATION_ELEMENTS)
    return "the story model's state does not fit in the vector unit's activation memory (196,608 elements)";
  return 0;
}

const char* story_state_init(StoryState* state, const StoryModel* model) {
  place_state(state, model); /* fits: story_model_load checked it */
  return 0;
}

void story_state_free(StoryState* state) { (void)state; }

/* Streams blob words from *offset up to `end` into WM at their offsets, continuing *hash. */
static int stream_words(uint32_t* offset, uint32_t end, uint32_t* hash) {
  for (uint32_t word; *offset < end; *offset += 4) {
    if (!story_read_word(&word, hash)) return 0;
    vu_wput(*offset, word);
  }
  return 1;
}

/* Streams a matrix's requantisation pairs like stream_words; *requant_ok is cleared by a pair the
 * operations do not accept. */
static int stream_pairs(uint32_t* offset, int rows, uint32_t* hash, int* requant_ok) {
  for (int i = 0; i < rows; ++i, *offset += 8) {
    uint32_t multiplier, shift;
    if (!story_read_word(&multiplier, hash) || !story_read_word(&shift, hash)) return 0;
    if (!story_requant_multiplier_valid((int32_t)multiplier) || !story_requant_shift_valid((int32_t)shift))
      *requant_ok = 0;
    vu_wput(*offset, multiplier);
    vu_wput(*offset + 4, shift);
  }
  return 1;
}

/* Streams the blob from its header's end up to the vocabulary into WM at the same offsets,
 * continuing *hash. A bad requantisation pair clears *requant_ok: it is reported only once the
 * checksum has matched, as the plain build does. */
static const char* stream_weights(const StoryModel* model, uint32_t* hash, int* requant_ok) {
  const StoryMatrix* matrices[STORY_MAX_MATRICES];
  const int count = story_model_matrices(model, matrices);
  uint32_t offset = STORY_HEADER_BYTES;
  *requant_ok = 1;
  for (int m = 0; m < count; ++m) { /* the previous matrix's weights, then this one's pairs */
    if (!stream_words(&offset, matrices[m]->offset, hash) ||
        !stream_pairs(&offset, matrices[m]->rows, hash, requant_ok))
      return "story model blob is truncated";
  }
  /* the last matrix's weights and the RoPE tables */
  return stream_words(&offset, model->vocabulary_start, hash) ? 0 : "story model blob is truncated";
}

const char* story_model_load(StoryModel* model) {
  uint8_t header[STORY_HEADER_BYTES];
  if (story_read_input(header, sizeof header) != sizeof header) return "story model blob is truncated (header)";
  const char* error;
  story_blob_size(header, &error);
  if (error) return error;
  if ((error = story_model_layout(model, header))) return error;
  if ((error = check_fits_the_unit(model))) return error;
  for (uint32_t offset = 0; offset < STORY_HEADER_BYTES; offset += 4) vu_wput(offset, story_read_u32(header + offset));
  uint32_t hash = story_fnv1a(STORY_FNV1A_BASIS, header, sizeof header);

  int requant_ok;
  if ((error = stream_weights(model, &hash, &requant_ok))) return error;
  const uint32_t vocabulary_bytes = model->blob_size - 4 - model->vocabulary_start;
  uint8_t* vocabulary = malloc(vocabulary_bytes);
  if (!vocabulary && vocabulary_bytes > 0) return "the story model's vocabulary does not fit in memory";
  uint8_t checksum[4];
  if (story_read_input(vocabulary, vocabulary_bytes) != vocabulary_bytes || story_read_input(checksum, 4) != 4)
    return "story model blob is truncated";
  hash = story_fnv1a(hash, vocabulary, vocabulary_bytes);
  if (hash != story_read_u32(checksum)) return "story model blob is corrupt (checksum mismatch)";
  if (!requant_ok) return STORY_BAD_REQUANT;
  return story_vocabulary_open(model, vocabulary);
}

/* The configuration registers as last set: all zero when the program starts, as the unit's are.
 * An operation's operands mostly repeat from one instruction to the next, so each is set only when
 * it changes. */
static uint32_t configured[VU_HS + 1];

static void configure(int reg, uint32_t value) {
  if (configured[reg] == value) return;
  configured[reg] = value;
  switch (reg) {
    case VU_VL: vu_set_vl(value); break;
    case VU_COLS: vu_set_cols(value); break;
    case VU_SRC: vu_set_src(value); break;
    case VU_AUX: vu_set_aux(value); break;
    case VU_HS: vu_set_hs(value); break;
  }
}

/* A matrix-vector product's operands: the matrix's shape and its input vector x. */
static void configure_matrix(const StoryMatrix* m, uint32_t x) {
  configure(VU_VL, (uint32_t)m->rows);
  configure(VU_COLS, (uint32_t)m->cols);
  configure(VU_SRC, x);
}

static void matvec16(uint32_t out, const StoryMatrix* m, uint32_t x) {
  configure_matrix(m, x);
  vu_matvec16(out, m->offset);
}

static void rmsnorm(const StoryModel* model, uint32_t out, uint32_t x) {
  configure(VU_VL, (uint32_t)model->dim);
  configure(VU_AUX, model->eps_term);
  vu_rmsnorm(out, x);
}

/* RoPE on n elements with the tables' row for `pos` (byte addresses in WM, as in the blob). */
static void rope(const StoryModel* model, uint32_t x, uint32_t n, int pos) {
  const uint32_t head_size = (uint32_t)(model->dim / model->n_heads);
  const uint32_t row = (uint32_t)pos * (head_size / 2) * 2;
  configure(VU_VL, n);
  configure(VU_HS, head_size);
  configure(VU_AUX, model->rope_sin + row);
  vu_rope(x, model->rope_cos + row);
}

static void add16(const StoryModel* model, uint32_t x, uint32_t y) {
  configure(VU_VL, (uint32_t)model->dim);
  vu_add16(x, y);
}

static void attention_block(const StoryModel* model, const StoryState* s, int l, int pos) {
  const StoryLayer* layer = &model->layers[l];
  const uint32_t dim = (uint32_t)model->dim, head_size = dim / (uint32_t)model->n_heads;
  const uint32_t kv_dim = head_size * (uint32_t)model->n_kv_heads;
  const int group = model->n_heads / model->n_kv_heads;
  const uint32_t layer_offset = (uint32_t)l * (uint32_t)model->seq_len * kv_dim;
  const uint32_t key = s->key_cache + layer_offset + (uint32_t)pos * kv_dim;
  const uint32_t value = s->value_cache + layer_offset + (uint32_t)pos * kv_dim;

  rmsnorm(model, s->xb, s->x);
  matvec16(s->q, &layer->wq, s->xb);
  matvec16(key, &layer->wk, s->xb);
  matvec16(value, &layer->wv, s->xb);
  rope(model, s->q, dim, pos);
  rope(model, key, kv_dim, pos);
  configure(VU_VL, (uint32_t)pos + 1);
  configure(VU_COLS, kv_dim);
  for (int h = 0; h < model->n_heads; ++h) {
    const uint32_t kv_head = (uint32_t)(h / group) * head_size;
    configure(VU_SRC, s->key_cache + layer_offset + kv_head);
    configure(VU_AUX, s->value_cache + layer_offset + kv_head);
    vu_attend(s->xb2 + (uint32_t)h * head_size, s->q + (uint32_t)h * head_size);
  }
  matvec16(s->xb, &layer->wo, s->xb2);
  add16(model, s->x, s->xb);
}

static void feed_forward_block(const StoryModel* model, const StoryState* s, int l) {
  const StoryLayer* layer = &model->layers[l];
  rmsnorm(model, s->xb, s->x);
  matvec16(s->hb, &layer->w1, s->xb);
  matvec16(s->hb2, &layer->w3, s->xb);
  configure(VU_VL, (uint32_t)model->hidden_dim);
  vu_silu(s->hb);
  configure(VU_AUX, STORY_GATED_SHIFT);
  vu_mul16(s->hb, s->hb2);
  matvec16(s->xb, &layer->w2, s->hb);
  add16(model, s->x, s->xb);
}

void story_forward(const StoryModel* model, StoryState* s, int token, int pos) {
  configure_matrix(&model->embedding, (uint32_t)token); /* SRC: the row to look up */
  vu_row16(s->x, model->embedding.offset);
  for (int l = 0; l < model->n_layers; ++l) {
    attention_block(model, s, l, pos);
    feed_forward_block(model, s, l);
  }
  rmsnorm(model, s->xb, s->x);
  matvec16(s->logits, &model->classifier, s->xb);
}

int story_argmax_logits(const StoryModel* model, StoryState* state) {
  configure(VU_VL, (uint32_t)model->vocab_size);
  return vu_argmax(state->logits);
}

#endif
