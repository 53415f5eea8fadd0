/* firmware/story/story_plain.c — the plain build of story_build.h (without the vector unit): the
 * whole blob in RAM, read in place; the state in RAM (malloc); the forward pass calls the operations
 * of story_ops.c. The host reference and the RV32IM firmware on emulator-1m. */
#ifndef RVFORMER_VECTOR_UNIT

#include <stdlib.h>
#include <string.h>

#include "story_build.h"

static const StoryRequant* requant_of(const StoryModel* model, const StoryMatrix* m) {
  return (const StoryRequant*)(model->blob + m->offset);
}

static const int8_t* weights_of(const StoryModel* model, const StoryMatrix* m) {
  return (const int8_t*)(model->blob + m->weights);
}

static int requant_valid(const StoryModel* model) {
  const StoryMatrix* matrices[STORY_MAX_MATRICES];
  const int count = story_model_matrices(model, matrices);
  for (int m = 0; m < count; ++m) {
    const StoryRequant* requant = requant_of(model, matrices[m]);
    for (int i = 0; i < matrices[m]->rows; ++i)
      if (!story_requant_multiplier_valid(requant[i].multiplier) || !story_requant_shift_valid(requant[i].shift))
        return 0;
  }
  return 1;
}

const char* story_model_open(StoryModel* model, const uint8_t* blob, size_t size) {
  const char* error = 0;
  if (size < STORY_HEADER_BYTES + 4) return "story model blob is truncated (header)";
  size_t expected = story_blob_size(blob, &error);
  if (error) return error;
  if (size != expected) return "story model blob is truncated or has trailing bytes";
  if (story_fnv1a(STORY_FNV1A_BASIS, blob, size - 4) != story_read_u32(blob + size - 4))
    return "story model blob is corrupt (checksum mismatch)";
  if ((error = story_model_layout(model, blob))) return error;
  model->blob = blob;
  if (!requant_valid(model)) return STORY_BAD_REQUANT;
  return story_vocabulary_open(model, blob + model->vocabulary_start);
}

const char* story_model_load(StoryModel* model) {
  uint8_t header[STORY_HEADER_BYTES];
  if (story_read_input(header, sizeof header) != sizeof header) return "story model blob is truncated (header)";
  const char* error;
  const size_t size = story_blob_size(header, &error);
  if (error) return error;
  uint8_t* blob = malloc(size);
  if (!blob) return "the story model blob does not fit in memory";
  memcpy(blob, header, sizeof header);
  if (story_read_input(blob + sizeof header, size - sizeof header) != size - sizeof header)
    return "story model blob is truncated";
  return story_model_open(model, blob, size);
}

const char* story_state_init(StoryState* state, const StoryModel* model) {
  const int dim = model->dim, hidden = model->hidden_dim;
  const size_t cache = (size_t)model->n_layers * model->seq_len * (dim / model->n_heads * model->n_kv_heads);
  memset(state, 0, sizeof *state);
  state->x = malloc(dim * sizeof(int16_t));
  state->xb = malloc(dim * sizeof(int16_t));
  state->xb2 = malloc(dim * sizeof(int16_t));
  state->q = malloc(dim * sizeof(int16_t));
  state->hb = malloc(hidden * sizeof(int16_t));
  state->hb2 = malloc(hidden * sizeof(int16_t));
  state->logits = malloc(model->vocab_size * sizeof(int16_t));
  state->key_cache = malloc(cache * sizeof(int16_t));
  state->value_cache = malloc(cache * sizeof(int16_t));
  const int allocated = state->x && state->xb && state->xb2 && state->q && state->hb && state->hb2 &&
                        state->logits && state->key_cache && state->value_cache;
  return allocated ? 0 : "the story model's state does not fit in memory";
}

void story_state_free(StoryState* state) {
  free(state->x);
  free(state->xb);
  free(state->xb2);
  free(state->q);
  free(state->hb);
  free(state->hb2);
  free(state->logits);
  free(state->key_cache);
  free(state->value_cache);
}

static void matvec16(const StoryModel* model, int16_t* out, const StoryMatrix* m, const int16_t* x) {
  story_matvec16(out, weights_of(model, m), (int)STORY_ROW_STRIDE(m->cols), requant_of(model, m), x, m->rows, m->cols);
}

static void attention_block(const StoryModel* model, StoryState* s, int l, int pos) {
  const StoryLayer* layer = &model->layers[l];
  const int dim = model->dim, head_size = dim / model->n_heads;
  const int kv_dim = head_size * model->n_kv_heads, group = model->n_heads / model->n_kv_heads;
  const size_t layer_offset = (size_t)l * model->seq_len * kv_dim;
  int16_t* key = s->key_cache + layer_offset + (size_t)pos * kv_dim;
  int16_t* value = s->value_cache + layer_offset + (size_t)pos * kv_dim;
  const int16_t* cos = (const int16_t*)(model->blob + model->rope) + (size_t)pos * 2 * STORY_ROPE_PAIRS;
  const int16_t* sin = cos + STORY_ROPE_PAIRS;

  story_rmsnorm(s->xb, s->x, dim, model->eps_term);
  matvec16(model, s->q, &layer->wq, s->xb);
  matvec16(model, key, &layer->wk, s->xb);
  matvec16(model, value, &layer->wv, s->xb);
  story_rope(s->q, cos, sin, dim, head_size);
  story_rope(key, cos, sin, kv_dim, head_size);
  for (int h = 0; h < model->n_heads; ++h) {
    const size_t kv_head = (size_t)(h / group) * head_size;
    story_attention_head(s->xb2 + h * head_size, s->q + h * head_size, s->key_cache + layer_offset + kv_head,
                         s->value_cache + layer_offset + kv_head, pos + 1, kv_dim, head_size);
  }
  matvec16(model, s->xb, &layer->wo, s->xb2);
  story_add16(s->x, s->xb, dim);
}

static void feed_forward_block(const StoryModel* model, StoryState* s, int l) {
  const StoryLayer* layer = &model->layers[l];
  story_rmsnorm(s->xb, s->x, model->dim, model->eps_term);
  matvec16(model, s->hb, &layer->w1, s->xb);
  matvec16(model, s->hb2, &layer->w3, s->xb);
  story_silu(s->hb, s->hb, model->hidden_dim);
  story_mul16(s->hb, s->hb, s->hb2, STORY_GATED_SHIFT, model->hidden_dim);
  matvec16(model, s->xb, &layer->w2, s->hb);
  story_add16(s->x, s->xb, model->dim);
}

void story_forward(const StoryModel* model, StoryState* s, int token, int pos) {
  const StoryMatrix* embedding = &model->embedding;
  const StoryRequant* requant = requant_of(model, embedding);
  const int8_t* row = (const int8_t*)(model->blob + story_row_offset(embedding, token));
  for (int j = 0; j < model->dim; ++j) s->x[j] = story_requant13(row[j], requant[token]);
  for (int l = 0; l < model->n_layers; ++l) {
    attention_block(model, s, l, pos);
    feed_forward_block(model, s, l);
  }
  story_rmsnorm(s->xb, s->x, model->dim, model->eps_term);
  matvec16(model, s->logits, &model->classifier, s->xb);
}

int story_argmax_logits(const StoryModel* model, StoryState* state) {
  return story_argmax16(state->logits, model->vocab_size);
}

#endif
