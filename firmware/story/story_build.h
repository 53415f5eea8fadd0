/* firmware/story/story_build.h — what the two builds of the story program do their own way: where
 * the model's weights are, the state, the forward pass and loading the blob. Exactly one of the
 * files implementing it compiles to code in a build (the other to nothing):
 *   story_plain.c   without RVFORMER_VECTOR_UNIT: the blob in RAM, the operations of story_ops.c
 *                   (the host reference, and the RV32IM firmware on emulator-1m);
 *   story_vector.c  with RVFORMER_VECTOR_UNIT: the blob in the vector unit's weight memory, the
 *                   activations and the KV cache in its activation memory, the operations as vu.*
 *                   instructions (runtime/rvformer_vector.h; the firmware on rvformer-vector). */
#ifndef STORY_BUILD_H
#define STORY_BUILD_H

#include "story_model.h"

#ifdef RVFORMER_VECTOR_UNIT
/* The vectors' element addresses in the activation memory; the KV cache is the unit's own, slot
 * layer * seq_len + position. */
struct StoryState {
  uint32_t x, xb, xb2, q, hb, hb2, logits;
  uint32_t k, v; /* this position's key and value, before they go into the KV cache */
};
#else
struct StoryState {
  int16_t *x, *xb, *xb2, *q, *hb, *hb2, *logits;
  int16_t *key_cache, *value_cache; /* [n_layers][seq_len][kv_dim] */
};

/* Points `model` into `blob` (which must stay alive, 4-byte aligned). Returns NULL, or a one-line
 * description of what is wrong (bad header, size, checksum, layout). */
const char* story_model_open(StoryModel* model, const uint8_t* blob, size_t size);
#endif

/* Reads the blob and opens it: the plain build from console input, the vector build from its weight
 * memory, where the image loader put it. Returns NULL or a one-line error, the same in both builds
 * for the same fault (a bad header, bad requantisation pairs, a bad vocabulary); the plain build,
 * which reads a stream, adds a truncated blob and a checksum mismatch, and the vector build a model
 * too big for the unit's memories. */
const char* story_model_load(StoryModel* model);

/* Makes the state for `model`; returns NULL, or a one-line error when it does not fit. */
const char* story_state_init(StoryState* state, const StoryModel* model);
void story_state_free(StoryState* state);

/* One forward pass: `token` at position `pos`, leaving the logits in the state. */
void story_forward(const StoryModel* model, StoryState* state, int token, int pos);

/* The first index of the largest of the last forward pass's logits: the greedy next token. */
int story_argmax_logits(const StoryModel* model, StoryState* state);

#endif
