/* firmware/story/story_model.c — see story_model.h: the blob's header checks and layout, the
 * tokenizer and the greedy loop, shared by both builds. */
#include "story_model.h"

#include <stdio.h>
#include <string.h>

#include "story_build.h"

uint32_t story_read_u32(const uint8_t* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t story_fnv1a(uint32_t hash, const uint8_t* bytes, size_t size) {
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 16777619u;
  return hash;
}

/* The firmware loads the map's input register, one instruction a byte where getchar's stdio path
 * costs dozens (the plain build's blob is hundreds of kilobytes); the host reference, which never
 * reads the console, keeps stdio. */
static int read_byte(void) {
#ifdef RVFORMER_INPUT_ADDRESS
  return (int)*(volatile int32_t*)RVFORMER_INPUT_ADDRESS;
#else
  return getchar();
#endif
}

size_t story_read_input(uint8_t* buffer, size_t size) {
  size_t got = 0;
  for (int c; got < size && (c = read_byte()) >= 0;) buffer[got++] = (uint8_t)c;
  return got;
}

size_t story_blob_size(const uint8_t header[STORY_HEADER_BYTES], const char** error) {
  uint32_t word[STORY_HEADER_WORDS];
  for (int i = 0; i < STORY_HEADER_WORDS; ++i) word[i] = story_read_u32(header + 4 * i);
  uint32_t dim = word[1], hidden = word[2], layers = word[3], heads = word[4], kv_heads = word[5];
  uint32_t vocab = word[6], seq_len = word[7], payload = word[9];
  *error = 0;
  if (word[0] != STORY_MAGIC)
    *error = "not a story model blob (bad magic)";
  else if (dim == 0 || dim > STORY_MAX_DOT || hidden == 0 || hidden > STORY_MAX_DOT || layers == 0 ||
           layers > STORY_MAX_LAYERS || heads == 0 || kv_heads == 0 || heads % kv_heads != 0 || dim % heads != 0 ||
           (dim / heads) % 2 != 0 || (2 * STORY_ROPE_PAIRS) % (dim / heads) != 0 || vocab <= STORY_BOS || vocab > 65536 || seq_len == 0 ||
           seq_len > STORY_MAX_SEQ_LEN)
    *error = "story model blob has unsupported dimensions";
  else if (payload % 4 != 0 || payload > (64u << 20))
    *error = "story model blob has a bad payload size";
  return *error ? 0 : STORY_HEADER_BYTES + (size_t)payload + 4;
}

/* Walks the payload's offsets, handing out aligned parts; `failed` is set once a part runs past the
 * end. The sizes stay far below 2^32: at most 64 MB of payload, and each part is checked in turn. */
typedef struct {
  uint32_t at;
  uint32_t end;
  int failed;
} Cursor;

static uint32_t take(Cursor* cursor, uint64_t bytes) {
  bytes = (bytes + 3) & ~(uint64_t)3;
  if (cursor->failed || cursor->end - cursor->at < bytes) {
    cursor->failed = 1;
    return 0;
  }
  uint32_t part = cursor->at;
  cursor->at += (uint32_t)bytes;
  return part;
}

static void align(Cursor* cursor, uint32_t alignment) {
  take(cursor, (alignment - cursor->at % alignment) % alignment);
}

static StoryMatrix take_matrix(Cursor* cursor, int rows, int cols) {
  StoryMatrix m = {.offset = take(cursor, (uint64_t)rows * sizeof(StoryRequant)), .rows = rows, .cols = cols};
  align(cursor, STORY_LINE_BYTES);
  m.weights = take(cursor, (uint64_t)rows * STORY_ROW_STRIDE(cols));
  return m;
}

const char* story_model_layout(StoryModel* model, const uint8_t header[STORY_HEADER_BYTES]) {
  memset(model, 0, sizeof *model);
  model->dim = (int)story_read_u32(header + 4);
  model->hidden_dim = (int)story_read_u32(header + 8);
  model->n_layers = (int)story_read_u32(header + 12);
  model->n_heads = (int)story_read_u32(header + 16);
  model->n_kv_heads = (int)story_read_u32(header + 20);
  model->vocab_size = (int)story_read_u32(header + 24);
  model->seq_len = (int)story_read_u32(header + 28);
  model->eps_term = story_read_u32(header + 32);
  const uint32_t payload = story_read_u32(header + 36);
  model->blob_size = STORY_HEADER_BYTES + payload + 4;
  for (int b = 0; b < 256; ++b) model->byte_pieces[b] = (uint8_t)b;
  const int dim = model->dim, hidden = model->hidden_dim;
  const int kv_dim = dim / model->n_heads * model->n_kv_heads;

  Cursor cursor = {STORY_HEADER_BYTES, STORY_HEADER_BYTES + payload, 0};
  model->embedding = take_matrix(&cursor, model->vocab_size, dim);
  for (int l = 0; l < model->n_layers; ++l) {
    StoryLayer* layer = &model->layers[l];
    layer->wq = take_matrix(&cursor, dim, dim);
    layer->wk = take_matrix(&cursor, kv_dim, dim);
    layer->wv = take_matrix(&cursor, kv_dim, dim);
    layer->wo = take_matrix(&cursor, dim, dim);
    layer->w1 = take_matrix(&cursor, hidden, dim);
    layer->w3 = take_matrix(&cursor, hidden, dim);
    layer->w2 = take_matrix(&cursor, dim, hidden);
  }
  model->classifier = take_matrix(&cursor, model->vocab_size, dim);
  align(&cursor, STORY_ROPE_ALIGN);
  model->rope = take(&cursor, (uint64_t)model->seq_len * 2 * STORY_ROPE_PAIRS * sizeof(int16_t));
  model->vocabulary_start = cursor.at;
  return cursor.failed ? "story model blob is truncated (weights)" : 0;
}

uint32_t story_row_offset(const StoryMatrix* m, int row) { return m->weights + (uint32_t)row * STORY_ROW_STRIDE(m->cols); }

int story_model_matrices(const StoryModel* model, const StoryMatrix* matrices[STORY_MAX_MATRICES]) {
  int count = 0;
  matrices[count++] = &model->embedding;
  for (int l = 0; l < model->n_layers; ++l) {
    const StoryLayer* layer = &model->layers[l];
    const StoryMatrix* in_blob_order[] = {&layer->wq, &layer->wk, &layer->wv, &layer->wo,
                                          &layer->w1, &layer->w3, &layer->w2};
    for (int i = 0; i < 7; ++i) matrices[count++] = in_blob_order[i];
  }
  matrices[count++] = &model->classifier;
  return count;
}

int story_requant_multiplier_valid(int32_t multiplier) { return multiplier >= 0 && multiplier <= 255; }

int story_requant_shift_valid(int32_t shift) { return shift >= 1 && shift <= 62; }

const char* story_vocabulary_open(StoryModel* model, const uint8_t* vocabulary) {
  const uint32_t size = model->blob_size - 4 - model->vocabulary_start;
  if ((uint64_t)model->vocab_size * 4 > size) return "story model blob is truncated (vocabulary)";
  model->vocabulary = vocabulary;
  model->vocabulary_offsets = (const uint32_t*)vocabulary;
  for (int i = 0; i < model->vocab_size; ++i) {
    uint32_t offset = model->vocabulary_offsets[i];
    if (offset % 4 != 0 || offset + (uint64_t)8 > size ||
        story_read_u32(vocabulary + offset + 4) > size - offset - 8)
      return "story model blob has a bad vocabulary record";
  }
  return 0;
}

/* A vocabulary record: its score key (order-preserving integer image of the float score) and bytes. */
static const uint8_t* record(const StoryModel* model, int token, int32_t* score_key, int* length) {
  const uint8_t* p = model->vocabulary + model->vocabulary_offsets[token];
  if (score_key) *score_key = (int32_t)story_read_u32(p);
  *length = (int)story_read_u32(p + 4);
  return p + 8;
}

static int hex_digit(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

const uint8_t* story_piece(const StoryModel* model, int previous, int token, int* length) {
  const uint8_t* piece = record(model, token, 0, length);
  if (previous == STORY_BOS && *length > 0 && piece[0] == ' ') {
    ++piece;
    --*length;
  }
  /* "<0xNN>": the byte NN, which the record holds at offset 3 as two hex digits. */
  if (*length == 6 && memcmp(piece, "<0x", 3) == 0 && piece[5] == '>') {
    int high = hex_digit(piece[3]), low = hex_digit(piece[4]);
    if (high >= 0 && low >= 0) {
      *length = 1;
      return &model->byte_pieces[high * 16 + low];
    }
  }
  return piece;
}

/* The token whose piece is exactly `text`, or -1 (the first such token, by id). */
static int lookup(const StoryModel* model, const uint8_t* text, int length) {
  for (int id = 0; id < model->vocab_size; ++id) {
    int piece_length;
    const uint8_t* piece = record(model, id, 0, &piece_length);
    if (piece_length == length && memcmp(piece, text, (size_t)length) == 0) return id;
  }
  return -1;
}

/* Length of the UTF-8 character starting at text[0]: a lead byte and its continuation bytes (at most 4). */
static int character_length(const uint8_t* text, int length) {
  int n = 1;
  while (n < length && n < 4 && (text[n] & 0xC0) == 0x80) ++n;
  return n;
}

/* Replaces the best adjacent pair with its merge; returns 0 when no pair merges. */
static int merge_best_pair(const StoryModel* model, int* tokens, int* count) {
  uint8_t joined[256];
  int best_index = -1, best_id = -1;
  int32_t best_key = 0;
  for (int i = 0; i + 1 < *count; ++i) {
    int a_length, b_length;
    const uint8_t* a = record(model, tokens[i], 0, &a_length);
    const uint8_t* b = record(model, tokens[i + 1], 0, &b_length);
    if (a_length + b_length > (int)sizeof joined) continue;
    memcpy(joined, a, (size_t)a_length);
    memcpy(joined + a_length, b, (size_t)b_length);
    int id = lookup(model, joined, a_length + b_length);
    if (id < 0) continue;
    int32_t key;
    int unused;
    record(model, id, &key, &unused);
    if (best_index < 0 || key > best_key) {
      best_index = i;
      best_id = id;
      best_key = key;
    }
  }
  if (best_index < 0) return 0;
  tokens[best_index] = best_id;
  memmove(tokens + best_index + 1, tokens + best_index + 2, (size_t)(*count - best_index - 2) * sizeof(int));
  --*count;
  return 1;
}

int story_encode(const StoryModel* model, const uint8_t* text, int length, int* tokens, int capacity) {
  int count = 0;
  if (capacity < 1) return -1;
  tokens[count++] = STORY_BOS;
  if (length > 0) {
    int space = lookup(model, (const uint8_t*)" ", 1);
    if (space >= 0) {
      if (count == capacity) return -1;
      tokens[count++] = space;
    }
  }
  for (int i = 0; i < length;) {
    int n = character_length(text + i, length - i);
    int id = lookup(model, text + i, n);
    for (int b = 0; b < (id >= 0 ? 1 : n); ++b) {
      if (count == capacity) return -1;
      /* Byte fallback: the byte pieces <0x00>..<0xFF> are ids 3..258. */
      tokens[count++] = id >= 0 ? id : text[i + b] + 3;
    }
    i += n;
  }
  while (merge_best_pair(model, tokens, &count)) {
  }
  return count;
}

int story_generate(const StoryModel* model, StoryState* state, const int* prompt, int prompt_length, int steps,
                   StoryEmit emit, void* context) {
  if (steps <= 0 || steps > model->seq_len) steps = model->seq_len;
  int token = prompt[0], emitted = 0;
  for (int pos = 0; pos < steps; ++pos) {
    story_forward(model, state, token, pos);
    int next = pos + 1 < prompt_length ? prompt[pos + 1] : story_argmax_logits(model, state);
    if (next == STORY_BOS) break;
    int length;
    const uint8_t* piece = story_piece(model, token, next, &length);
    emit(context, next, piece, length);
    ++emitted;
    token = next;
  }
  return emitted;
}
