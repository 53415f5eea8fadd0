/* firmware/story/story_model.h — the quantised story model: the blob format the quantiser
 * (src/story/) writes and the firmware reads from console input, the blob's header checks and layout,
 * the tokenizer (llama2.c's encode and decode) and the greedy generation loop. Plain C, compiled for
 * the host (the reference) and for RV32IM (the firmware), the same in every build; what differs
 * between the plain build and the vector unit's (where the weights are, the forward pass, loading)
 * is in story_build.h.
 *
 * Blob (little-endian, every part starting at a multiple of 4 bytes; docs/story.md, "Blob"):
 *   header   STORY_HEADER_WORDS uint32: magic "STQ4", dim, hidden_dim, n_layers, n_heads, n_kv_heads,
 *            vocab_size, seq_len, eps_term (story_rmsnorm's), payload_bytes
 *   payload  matrices, each StoryRequant[rows], then from the next multiple of STORY_LINE_BYTES bytes
 *            of the blob its int8 rows, each padded with zeros to STORY_ROW_STRIDE(cols): the embedding
 *            (to STORY_FRAC_X), per layer wq, wk (to _Q), wv (_V), wo (_X), w1, w3 (_H), w2 (_X);
 *            the classifier (_LOGIT); from the next multiple of STORY_ROPE_ALIGN bytes of the blob,
 *            the RoPE table, int16 [seq_len][2][STORY_ROPE_PAIRS], Q14: per position the cosines of
 *            a line's pairs (pair p's angle is the head's angle p mod head_size / 2), then their
 *            sines, as vu.rope reads them; the vocabulary: uint32 offset[vocab_size] (from the vocabulary's
 *            start) to records {int32 score_key, uint32 length, bytes (padded to 4)}
 *   checksum uint32 FNV-1a of the header and payload bytes */
#ifndef STORY_MODEL_H
#define STORY_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "story_ops.h"

#define STORY_MAGIC 0x34515453u /* "STQ4" */
#define STORY_HEADER_WORDS 10
#define STORY_HEADER_BYTES (4 * STORY_HEADER_WORDS)
#define STORY_MAX_LAYERS 32
#define STORY_MAX_SEQ_LEN 512
#define STORY_BOS 1
#define STORY_FNV1A_BASIS 2166136261u
#define STORY_ROPE_PAIRS 8  /* the pairs of a line of 16 activations */
#define STORY_ROPE_ALIGN 32 /* the RoPE table's alignment: a row of it never crosses a half of a WM line */
/* A matrix's rows start at a line of the vector unit's weight memory and take whole lines, so that a
 * row of up to 64 weights is one WM line. */
#define STORY_LINE_BYTES 64
#define STORY_ROW_STRIDE(cols) (((uint32_t)(cols) + STORY_LINE_BYTES - 1) / STORY_LINE_BYTES * STORY_LINE_BYTES)

/* A matrix by its place in the blob: `rows` StoryRequant pairs at byte offset `offset`, then its
 * int8 rows from byte offset `weights` (offset + 8 * rows rounded up to a multiple of STORY_LINE_BYTES),
 * row i at weights + i * STORY_ROW_STRIDE(cols). The plain build reads it in the blob in RAM, the
 * vector build at the same address of the unit's weight memory (the unit's "matrix" operand). */
typedef struct {
  uint32_t offset;
  uint32_t weights;
  int rows;
  int cols;
} StoryMatrix;

typedef struct {
  StoryMatrix wq, wk, wv, wo, w1, w3, w2;
} StoryLayer;

/* The matrices in blob order: the embedding, each layer's 7, the classifier. */
#define STORY_MAX_MATRICES (2 + 7 * STORY_MAX_LAYERS)

typedef struct {
  int dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
  uint32_t eps_term;
  StoryMatrix embedding, classifier;
  StoryLayer layers[STORY_MAX_LAYERS];
  uint32_t rope;               /* blob offset of the RoPE table, int16 [seq_len][2][STORY_ROPE_PAIRS] */
  uint32_t vocabulary_start;   /* blob offset of the vocabulary part: the weights are all before it */
  uint32_t blob_size;          /* header, payload and checksum */
  const uint8_t* blob;         /* the whole blob in RAM, in the plain build only */
  const uint8_t* vocabulary;   /* the vocabulary part in RAM */
  const uint32_t* vocabulary_offsets;
  uint8_t byte_pieces[256]; /* byte_pieces[b] = b: what a piece <0xNN> prints */
} StoryModel;

/* The activations and the KV cache of one generation; each build defines it (story_build.h). */
typedef struct StoryState StoryState;

uint32_t story_read_u32(const uint8_t* bytes);

/* FNV-1a continued over `size` more bytes from `hash` (STORY_FNV1A_BASIS to start). */
uint32_t story_fnv1a(uint32_t hash, const uint8_t* bytes, size_t size);

/* Reads up to `size` bytes of console input; returns how many arrived before the end of input. */
size_t story_read_input(uint8_t* buffer, size_t size);

/* The whole blob's size (header, payload and checksum) from its header, or 0 with *error set when
 * the header is not a story blob the firmware can run. */
size_t story_blob_size(const uint8_t header[STORY_HEADER_BYTES], const char** error);

/* Fills `model`'s dimensions and the offsets of its parts from a header story_blob_size accepts.
 * Returns NULL, or a one-line description of what is wrong (the payload too short for the weights). */
const char* story_model_layout(StoryModel* model, const uint8_t header[STORY_HEADER_BYTES]);

/* The blob offset of row `row` of matrix `m`. */
uint32_t story_row_offset(const StoryMatrix* m, int row);

/* The model's matrices in blob order (offsets ascending); returns their count. */
int story_model_matrices(const StoryModel* model, const StoryMatrix* matrices[STORY_MAX_MATRICES]);

/* Whether a requantisation pair is one story_requant13/32 accept (multiplier in [0, 255],
 * shift in [1, 62]): checked for its multiplier and its shift word apart. */
int story_requant_multiplier_valid(int32_t multiplier);
int story_requant_shift_valid(int32_t shift);
#define STORY_BAD_REQUANT "story model blob has bad requantisation parameters"
/* The vector build's blob is its weight memory's image. */
#define STORY_BLOB_TOO_BIG_FOR_WM "the story model blob does not fit in the vector unit's weight memory (384 KiB)"

/* Points the model's vocabulary at `vocabulary`, the blob's bytes from model->vocabulary_start up to
 * its checksum (4-byte aligned, kept alive), and checks its records. Returns NULL or a one-line error. */
const char* story_vocabulary_open(StoryModel* model, const uint8_t* vocabulary);

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
