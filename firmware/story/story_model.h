/* firmware/story/story_model.h — the quantised story model: the blob format the quantiser
 * (src/story/) writes and the firmware reads from console input, the fixed-point forward pass built
 * from the operations of story_ops.h, the tokenizer (llama2.c's encode and decode) and the greedy
 * generation loop. Plain C, compiled for the host (the reference) and for RV32IM (the firmware).
 *
 * Blob (little-endian, every part starting at a multiple of 4 bytes; docs/story.md, "Blob"):
 *   header   STORY_HEADER_WORDS uint32: magic "STQ1", dim, hidden_dim, n_layers, n_heads, n_kv_heads,
 *            vocab_size, seq_len, eps_term (story_rmsnorm's), payload_bytes
 *   payload  matrices, each StoryRequant[rows] then int8[rows * cols] (padded to 4): the embedding
 *            (to STORY_FRAC_X), per layer wq, wk (to _Q), wv (_V), wo (_X), w1, w3 (_H), w2 (_X);
 *            the classifier (int32 logits, _LOGIT); RoPE cos then sin, int16 [seq_len][head_size / 2], Q14
 *            (each padded to 4); the vocabulary: uint32 offset[vocab_size] (from the vocabulary's
 *            start) to records {int32 score_key, uint32 length, bytes (padded to 4)}
 *   checksum uint32 FNV-1a of the header and payload bytes */
#ifndef STORY_MODEL_H
#define STORY_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "story_ops.h"

#define STORY_MAGIC 0x31515453u /* "STQ1" */
#define STORY_HEADER_WORDS 10
#define STORY_HEADER_BYTES (4 * STORY_HEADER_WORDS)
#define STORY_MAX_LAYERS 32
#define STORY_MAX_SEQ_LEN 512
#define STORY_BOS 1

typedef struct {
  const StoryRequant* requant;
  const int8_t* weights;
  int rows;
  int cols;
} StoryMatrix;

typedef struct {
  StoryMatrix wq, wk, wv, wo, w1, w3, w2;
} StoryLayer;

typedef struct {
  int dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
  uint32_t eps_term;
  StoryMatrix embedding, classifier;
  StoryLayer layers[STORY_MAX_LAYERS];
  const int16_t* rope_cos;
  const int16_t* rope_sin;
  const uint8_t* vocabulary;        /* start of the vocabulary part */
  const uint32_t* vocabulary_offsets;
  uint8_t byte_pieces[256]; /* byte_pieces[b] = b: what a piece <0xNN> prints */
} StoryModel;

/* The whole blob's size (header, payload and checksum) from its header, or 0 with *error set when
 * the header is not a story blob the firmware can run. */
size_t story_blob_size(const uint8_t header[STORY_HEADER_BYTES], const char** error);

/* Points `model` into `blob` (which must stay alive, 4-byte aligned). Returns NULL, or a one-line
 * description of what is wrong (bad header, size, checksum, layout). */
const char* story_model_open(StoryModel* model, const uint8_t* blob, size_t size);

/* The activations and the KV cache of one generation. */
typedef struct {
  int16_t *x, *xb, *xb2, *q, *hb, *hb2;
  int32_t* logits;
  int16_t *key_cache, *value_cache; /* [n_layers][seq_len][kv_dim] */
} StoryState;

/* Allocates (malloc) the state for `model`; returns 0 when memory runs out. */
int story_state_init(StoryState* state, const StoryModel* model);
void story_state_free(StoryState* state);

/* One forward pass: `token` at position `pos`; leaves the logits in state->logits. */
void story_forward(const StoryModel* model, StoryState* state, int token, int pos);

/* The bytes a token stands for, as llama2.c prints them: a piece after BOS loses its leading space,
 * a byte piece <0xNN> is that one byte. */
const uint8_t* story_piece(const StoryModel* model, int previous, int token, int* length);

/* llama2.c's encode with BOS and no EOS: BOS, then (for non-empty text) the piece " ", then each
 * UTF-8 character's piece (or its bytes' <0xNN> pieces), then merges of adjacent pieces, the
 * best-scoring first (the leftmost on ties). Writes at most `capacity` ids; returns the count, or
 * -1 when they do not fit. */
int story_encode(const StoryModel* model, const uint8_t* text, int length, int* tokens, int capacity);

/* Called for each generated token with its piece. */
typedef void (*StoryEmit)(void* context, int token, const uint8_t* piece, int length);

/* Greedy generation like llama2.c's `run -t 0`: feeds prompt[0] (BOS) at position 0 and each next
 * token after it (the prompt's own while it lasts, then the argmax), calling `emit` for each, until
 * BOS is picked or `steps` forward passes have run (steps <= 0 or > seq_len: seq_len). Returns the
 * number of tokens emitted. */
int story_generate(const StoryModel* model, StoryState* state, const int* prompt, int prompt_length, int steps,
                   StoryEmit emit, void* context);

#endif
