/* firmware/story/story_model.c — see story_model.h: the blob reader, the forward pass, the
 * tokenizer and the greedy loop. */
#include "story_model.h"

#include <stdlib.h>
#include <string.h>

static uint32_t read_u32(const uint8_t* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static size_t padded(size_t bytes) { return (bytes + 3) & ~(size_t)3; }

static uint32_t fnv1a(const uint8_t* bytes, size_t size) {
  uint32_t hash = 2166136261u;
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 16777619u;
  return hash;
}

size_t story_blob_size(const uint8_t header[STORY_HEADER_BYTES], const char** error) {
  uint32_t word[STORY_HEADER_WORDS];
  for (int i = 0; i < STORY_HEADER_WORDS; ++i) word[i] = read_u32(header + 4 * i);
  uint32_t dim = word[1], hidden = word[2], layers = word[3], heads = word[4], kv_heads = word[5];
  uint32_t vocab = word[6], seq_len = word[7], payload = word[9];
  *error = 0;
  if (word[0] != STORY_MAGIC)
    *error = "not a story model blob (bad magic)";
  else if (dim == 0 || dim > STORY_MAX_DOT || hidden == 0 || hidden > STORY_MAX_DOT || layers == 0 ||
           layers > STORY_MAX_LAYERS || heads == 0 || kv_heads == 0 || heads % kv_heads != 0 || dim % heads != 0 ||
           (dim / heads) % 2 != 0 || vocab <= STORY_BOS || vocab > 65536 || seq_len == 0 ||
           seq_len > STORY_MAX_SEQ_LEN)
    *error = "story model blob has unsupported dimensions";
  else if (payload % 4 != 0 || payload > (64u << 20))
    *error = "story model blob has a bad payload size";
  return *error ? 0 : STORY_HEADER_BYTES + (size_t)payload + 4;
}

/* Walks the payload, handing out aligned parts; `failed` is set once a part runs past the end. */
typedef struct {
  const uint8_t* at;
  const uint8_t* end;
  int failed;
} Cursor;

static const uint8_t* take(Cursor* cursor, size_t bytes) {
  bytes = padded(bytes);
  if (cursor->failed || (size_t)(cursor->end - cursor->at) < bytes) {
    cursor->failed = 1;
    return 0;
  }
  const uint8_t* part = cursor->at;
  cursor->at += bytes;
  return part;
}

static StoryMatrix take_matrix(Cursor* cursor, int rows, int cols) {
  StoryMatrix m = {0, 0, rows, cols};
  m.requant = (const StoryRequant*)take(cursor, (size_t)rows * sizeof(StoryRequant));
  m.weights = (const int8_t*)take(cursor, (size_t)rows * cols);
  return m;
}

static int requant_valid(const StoryMatrix* m) {
  for (int i = 0; i < m->rows; ++i)
    if (m->requant[i].multiplier < (1 << 30) || m->requant[i].shift < 1 || m->requant[i].shift > 62) return 0;
  return 1;
}

static int layer_valid(const StoryLayer* layer) {
  const StoryMatrix* all[] = {&layer->wq, &layer->wk, &layer->wv, &layer->wo, &layer->w1, &layer->w3, &layer->w2};
  for (int i = 0; i < 7; ++i)
    if (!requant_valid(all[i])) return 0;
  return 1;
}

static const char* open_vocabulary(StoryModel* model, Cursor* cursor) {
  model->vocabulary = cursor->at;
  model->vocabulary_offsets = (const uint32_t*)take(cursor, (size_t)model->vocab_size * 4);
  if (cursor->failed) return "story model blob is truncated (vocabulary)";
  size_t size = (size_t)(cursor->end - model->vocabulary);
  for (int i = 0; i < model->vocab_size; ++i) {
    uint32_t offset = model->vocabulary_offsets[i];
    if (offset % 4 != 0 || offset + (size_t)8 > size ||
        read_u32(model->vocabulary + offset + 4) > size - offset - 8)
      return "story model blob has a bad vocabulary record";
  }
  return 0;
}

const char* story_model_open(StoryModel* model, const uint8_t* blob, size_t size) {
  const char* error = 0;
  if (size < STORY_HEADER_BYTES + 4) return "story model blob is truncated (header)";
  size_t expected = story_blob_size(blob, &error);
  if (error) return error;
  if (size != expected) return "story model blob is truncated or has trailing bytes";
  if (fnv1a(blob, size - 4) != read_u32(blob + size - 4)) return "story model blob is corrupt (checksum mismatch)";

  memset(model, 0, sizeof *model);
  model->dim = (int)read_u32(blob + 4);
  model->hidden_dim = (int)read_u32(blob + 8);
  model->n_layers = (int)read_u32(blob + 12);
  model->n_heads = (int)read_u32(blob + 16);
  model->n_kv_heads = (int)read_u32(blob + 20);
  model->vocab_size = (int)read_u32(blob + 24);
  model->seq_len = (int)read_u32(blob + 28);
  model->eps_term = read_u32(blob + 32);
  const int dim = model->dim, hidden = model->hidden_dim;
  const int kv_dim = dim / model->n_heads * model->n_kv_heads, half_head = dim / model->n_heads / 2;

  Cursor cursor = {blob + STORY_HEADER_BYTES, blob + size - 4, 0};
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
  model->rope_cos = (const int16_t*)take(&cursor, (size_t)model->seq_len * half_head * 2);
  model->rope_sin = (const int16_t*)take(&cursor, (size_t)model->seq_len * half_head * 2);
  if (cursor.failed) return "story model blob is truncated (weights)";
  for (int b = 0; b < 256; ++b) model->byte_pieces[b] = (uint8_t)b;
  if (!requant_valid(&model->embedding) || !requant_valid(&model->classifier))
    return "story model blob has bad requantisation parameters";
  for (int l = 0; l < model->n_layers; ++l)
    if (!layer_valid(&model->layers[l])) return "story model blob has bad requantisation parameters";
  return open_vocabulary(model, &cursor);
}

int story_state_init(StoryState* state, const StoryModel* model) {
  const int dim = model->dim, hidden = model->hidden_dim;
  const size_t cache = (size_t)model->n_layers * model->seq_len * (dim / model->n_heads * model->n_kv_heads);
  memset(state, 0, sizeof *state);
  state->x = malloc(dim * sizeof(int16_t));
  state->xb = malloc(dim * sizeof(int16_t));
  state->xb2 = malloc(dim * sizeof(int16_t));
  state->q = malloc(dim * sizeof(int16_t));
  state->hb = malloc(hidden * sizeof(int16_t));
  state->hb2 = malloc(hidden * sizeof(int16_t));
  state->logits = malloc(model->vocab_size * sizeof(int32_t));
  state->key_cache = malloc(cache * sizeof(int16_t));
  state->value_cache = malloc(cache * sizeof(int16_t));
  return state->x && state->xb && state->xb2 && state->q && state->hb && state->hb2 && state->logits &&
         state->key_cache && state->value_cache;
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

static void matvec16(int16_t* out, const StoryMatrix* m, const int16_t* x) {
  story_matvec16(out, m->weights, m->requant, x, m->rows, m->cols);
}

static void attention_block(const StoryModel* model, StoryState* s, int l, int pos) {
  const StoryLayer* layer = &model->layers[l];
  const int dim = model->dim, head_size = dim / model->n_heads;
  const int kv_dim = head_size * model->n_kv_heads, group = model->n_heads / model->n_kv_heads;
  const size_t layer_offset = (size_t)l * model->seq_len * kv_dim;
  int16_t* key = s->key_cache + layer_offset + (size_t)pos * kv_dim;
  int16_t* value = s->value_cache + layer_offset + (size_t)pos * kv_dim;
  const int16_t* cos = model->rope_cos + (size_t)pos * (head_size / 2);
  const int16_t* sin = model->rope_sin + (size_t)pos * (head_size / 2);

  story_rmsnorm(s->xb, s->x, dim, model->eps_term);
  matvec16(s->q, &layer->wq, s->xb);
  matvec16(key, &layer->wk, s->xb);
  matvec16(value, &layer->wv, s->xb);
  story_rope(s->q, cos, sin, dim, head_size);
  story_rope(key, cos, sin, kv_dim, head_size);
  for (int h = 0; h < model->n_heads; ++h) {
    const size_t kv_head = (size_t)(h / group) * head_size;
    story_attention_head(s->xb2 + h * head_size, s->q + h * head_size, s->key_cache + layer_offset + kv_head,
                         s->value_cache + layer_offset + kv_head, pos + 1, kv_dim, head_size);
  }
  matvec16(s->xb, &layer->wo, s->xb2);
  story_add16(s->x, s->xb, dim);
}

static void feed_forward_block(const StoryModel* model, StoryState* s, int l) {
  const StoryLayer* layer = &model->layers[l];
  story_rmsnorm(s->xb, s->x, model->dim, model->eps_term);
  matvec16(s->hb, &layer->w1, s->xb);
  matvec16(s->hb2, &layer->w3, s->xb);
  story_silu(s->hb, s->hb, model->hidden_dim);
  story_mul16(s->hb, s->hb, s->hb2, STORY_FRAC_H, model->hidden_dim);
  matvec16(s->xb, &layer->w2, s->hb);
  story_add16(s->x, s->xb, model->dim);
}

void story_forward(const StoryModel* model, StoryState* s, int token, int pos) {
  const StoryMatrix* embedding = &model->embedding;
  for (int j = 0; j < model->dim; ++j)
    s->x[j] = story_requant16(embedding->weights[(size_t)token * model->dim + j], embedding->requant[token]);
  for (int l = 0; l < model->n_layers; ++l) {
    attention_block(model, s, l, pos);
    feed_forward_block(model, s, l);
  }
  story_rmsnorm(s->xb, s->x, model->dim, model->eps_term);
  story_matvec32(s->logits, model->classifier.weights, model->classifier.requant, s->xb, model->vocab_size,
                 model->dim);
}

/* A vocabulary record: its score key (order-preserving integer image of the float score) and bytes. */
static const uint8_t* record(const StoryModel* model, int token, int32_t* score_key, int* length) {
  const uint8_t* p = model->vocabulary + model->vocabulary_offsets[token];
  if (score_key) *score_key = (int32_t)read_u32(p);
  *length = (int)read_u32(p + 4);
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
    int next = pos + 1 < prompt_length ? prompt[pos + 1] : story_argmax32(state->logits, model->vocab_size);
    if (next == STORY_BOS) break;
    int length;
    const uint8_t* piece = story_piece(model, token, next, &length);
    emit(context, next, piece, length);
    ++emitted;
    token = next;
  }
  return emitted;
}
