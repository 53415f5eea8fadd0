/* firmware/story/story_vector.c — the vector unit's build of story_build.h (RVFORMER_VECTOR_UNIT,
 * the rvformer-vector map): the blob is the program image's weight memory (WM), placed there by the
 * image loader, so that each matrix is at its blob offset in the unit's matrix layout; the firmware
 * reads the header, the requantisation pairs and the vocabulary from WM (vu.wget) to check them,
 * and keeps a copy of the vocabulary in RAM. The activations live in the activation memory (AM), the
 * keys and values in the unit's KV cache (slot layer * seq_len + position), and every operation of
 * the forward pass is one vu.* instruction (runtime/rvformer_vector.h).
 *
 * AM layout (element addresses, from 0, each vector from a line's first element): k and v
 * [VU_KV_ELEMENTS each: vu.kput and vu.vput copy that many, from a multiple of it], xb, x, xb2, q
 * [dim each], hb, hb2 [hidden_dim each], logits [vocab_size]; x lies 32 elements off xb modulo 64,
 * and hb2 off hb, as vu.add16 and vu.mul16 need of their operands; x (vu.rmsnorm's input) starts at
 * a multiple of 32 and xb, xb2 and hb (vu.matvec16's) at a multiple of 64, each within one AM row of
 * VU_ROW_ELEMENTS, moved on to the next row when it would cross one (for stories260K: k at 0, v at
 * 32, xb at 64, x at 160, xb2 at 256, q at 320, hb at 512, hb2 at 736, logits at 912, 1,424 elements
 * in all). */
#ifdef RVFORMER_VECTOR_UNIT

#include <rvformer_vector.h>
#include <stdlib.h>

#include "story_build.h"

/* Where a vector may start: at any line's first element, or within one AM row (from a multiple of
 * 32, all of it inside one row of VU_ROW_ELEMENTS), as the unit reads vu.rmsnorm's input and
 * vu.kput's and vu.vput's elements, or so from a multiple of 64, as it reads vu.matvec16's input. */
typedef enum { ANY_LINE, IN_ONE_ROW, MATRIX_INPUT } Placement;

/* No partner: a vector that is no second operand of vu.add16 or vu.mul16. */
#define NO_PARTNER UINT32_MAX

/* Hands out `elements` AM elements from the first line at or after *next that `placement` allows and
 * that lies 32 elements off `partner` modulo 64 unless there is none (line l of both then lies in
 * banks of opposite parity, which vu.add16 and vu.mul16 read in one pass). A vector that no line of
 * AM can hold goes past AM's end, which check_fits_the_unit refuses. */
static uint32_t allocate(uint32_t* next, uint32_t elements, Placement placement, uint32_t partner) {
  uint32_t first = (*next + VU_LINE_ELEMENTS - 1) / VU_LINE_ELEMENTS * VU_LINE_ELEMENTS;
  while (first < VU_ACTIVATION_ELEMENTS &&
         ((partner != NO_PARTNER && ((first - partner) & 63u) != 32u) ||
          (placement != ANY_LINE && (first % (placement == MATRIX_INPUT ? 64u : 32u) != 0 ||
                                     first % VU_ROW_ELEMENTS + elements > VU_ROW_ELEMENTS))))
    first += VU_LINE_ELEMENTS;
  *next = first + elements;
  return first;
}

/* Places the state in AM (the layout at the top of this file); returns the elements it takes, more
 * than AM holds when it does not fit. */
static uint32_t place_state(StoryState* s, const StoryModel* model) {
  const uint32_t dim = (uint32_t)model->dim, hidden = (uint32_t)model->hidden_dim;
  uint32_t next = 0;
  s->k = allocate(&next, VU_KV_ELEMENTS, IN_ONE_ROW, NO_PARTNER);
  s->v = allocate(&next, VU_KV_ELEMENTS, IN_ONE_ROW, NO_PARTNER);
  s->xb = allocate(&next, dim, MATRIX_INPUT, NO_PARTNER);
  s->x = allocate(&next, dim, IN_ONE_ROW, s->xb);
  s->xb2 = allocate(&next, dim, MATRIX_INPUT, NO_PARTNER);
  s->q = allocate(&next, dim, ANY_LINE, NO_PARTNER);
  s->hb = allocate(&next, hidden, MATRIX_INPUT, NO_PARTNER);
  s->hb2 = allocate(&next, hidden, ANY_LINE, s->hb);
  s->logits = allocate(&next, (uint32_t)model->vocab_size, ANY_LINE, NO_PARTNER);
  return next;
}

/* What the unit's memories must hold, known from the header. */
static const char* check_fits_the_unit(const StoryModel* model) {
  if (model->blob_size > VU_WEIGHT_BYTES) return STORY_BLOB_TOO_BIG_FOR_WM;
  StoryState state;
  const uint32_t kv_dim = (uint32_t)(model->dim / model->n_heads * model->n_kv_heads);
  if (place_state(&state, model) > VU_ACTIVATION_ELEMENTS || kv_dim > VU_KV_ELEMENTS ||
      (uint32_t)model->n_layers * (uint32_t)model->seq_len > VU_KV_SLOTS)
    return "the story model's state does not fit in the vector unit's memories (32,768 activations, "
           "4,096 KV slots of 32 elements)";
  return 0;
}

const char* story_state_init(StoryState* state, const StoryModel* model) {
  place_state(state, model); /* fits: story_model_load checked it */
  return 0;
}

void story_state_free(StoryState* state) { (void)state; }

/* Copies `count` words of WM from byte address `offset` (a multiple of 4) into `words`: the blob's
 * little-endian bytes as they are. */
static void read_weight_words(uint32_t* words, uint32_t offset, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) words[i] = vu_wget(offset + 4 * i);
}

/* Whether every matrix's requantisation pairs in WM are ones the operations accept. */
static int requantisation_valid(const StoryModel* model) {
  const StoryMatrix* matrices[STORY_MAX_MATRICES];
  const int count = story_model_matrices(model, matrices);
  for (int m = 0; m < count; ++m)
    for (uint32_t pair = matrices[m]->offset, end = pair + 8u * (uint32_t)matrices[m]->rows; pair < end; pair += 8) {
      const int32_t multiplier = (int32_t)vu_wget(pair), shift = (int32_t)vu_wget(pair + 4);
      if (!story_requant_multiplier_valid(multiplier) || !story_requant_shift_valid(shift)) return 0;
    }
  return 1;
}

const char* story_model_load(StoryModel* model) {
  uint32_t header_words[STORY_HEADER_WORDS];
  read_weight_words(header_words, 0, STORY_HEADER_WORDS);
  const uint8_t* header = (const uint8_t*)header_words;
  if (header_words[0] == 0) return "the vector unit's weight memory holds no story model blob";
  const char* error;
  story_blob_size(header, &error);
  if (error) return error;
  if ((error = story_model_layout(model, header))) return error;
  if ((error = check_fits_the_unit(model))) return error;
  if (!requantisation_valid(model)) return STORY_BAD_REQUANT;
  const uint32_t vocabulary_words = (model->blob_size - 4 - model->vocabulary_start + 3) / 4;
  uint32_t* vocabulary = malloc(4 * vocabulary_words);
  if (!vocabulary && vocabulary_words > 0) return "the story model's vocabulary does not fit in memory";
  read_weight_words(vocabulary, model->vocabulary_start, vocabulary_words);
  return story_vocabulary_open(model, (const uint8_t*)vocabulary);
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

/* RoPE on n elements with the table's row for `pos` (a byte address in WM, as in the blob). */
static void rope(const StoryModel* model, uint32_t x, uint32_t n, int pos) {
  configure(VU_VL, n);
  vu_rope(x, model->rope + (uint32_t)pos * 2 * STORY_ROPE_PAIRS * sizeof(int16_t));
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
  const uint32_t first_slot = (uint32_t)l * (uint32_t)model->seq_len;

  rmsnorm(model, s->xb, s->x);
  matvec16(s->q, &layer->wq, s->xb);
  matvec16(s->k, &layer->wk, s->xb);
  matvec16(s->v, &layer->wv, s->xb);
  rope(model, s->q, dim, pos);
  rope(model, s->k, kv_dim, pos);
  vu_kput(s->k, first_slot + (uint32_t)pos);
  vu_vput(s->v, first_slot + (uint32_t)pos);
  configure(VU_VL, (uint32_t)pos + 1);
  configure(VU_SRC, first_slot);
  configure(VU_HS, head_size);
  for (int h = 0; h < model->n_heads; ++h) {
    configure(VU_AUX, (uint32_t)(h / group) * head_size);
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
  const StoryMatrix* embedding = &model->embedding;
  configure(VU_VL, (uint32_t)embedding->cols);
  configure(VU_AUX, embedding->offset + 8u * (uint32_t)token); /* the row's requantisation pair */
  vu_row16(s->x, story_row_offset(embedding, token));
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
