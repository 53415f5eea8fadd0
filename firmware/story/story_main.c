/* firmware/story/story_main.c — the story program's main (RV32IM firmware only; the host links the
 * rest of firmware/story/ as the reference). Console input: the model blob (story_model.h), then a
 * request line "STEPS MODE\n", then the prompt's bytes up to the end of input. It prints each
 * generated token's piece as it is produced and a final newline, as llama2.c's run does; MODE 1 then
 * adds a record separator (0x1E), the number of story tokens and a newline, for
 * `rvformer story --stats`; MODE 2 prints each token's id and a newline instead of its piece, for
 * tests. Any failure is one line "error: ..." and exit status 1. */
#include <stdio.h>
#include <stdlib.h>

#include "story_model.h"

static void fail(const char* message) {
  printf("error: %s\n", message);
  exit(1);
}

/* Reads `size` bytes of console input; returns how many arrived before the end of input. */
static size_t read_bytes(uint8_t* buffer, size_t size) {
  size_t got = 0;
  for (int c; got < size && (c = getchar()) != EOF;) buffer[got++] = (uint8_t)c;
  return got;
}

static uint8_t* read_blob(size_t* size) {
  uint8_t header[STORY_HEADER_BYTES];
  if (read_bytes(header, sizeof header) != sizeof header) fail("story model blob is truncated (header)");
  const char* error;
  *size = story_blob_size(header, &error);
  if (error) fail(error);
  uint8_t* blob = malloc(*size);
  if (!blob) fail("the story model blob does not fit in memory");
  for (size_t i = 0; i < sizeof header; ++i) blob[i] = header[i];
  if (read_bytes(blob + sizeof header, *size - sizeof header) != *size - sizeof header)
    fail("story model blob is truncated");
  return blob;
}

static int read_number(void) {
  int value = 0, c;
  while ((c = getchar()) == ' ') {
  }
  if (c < '0' || c > '9') fail("the request after the model blob must be \"STEPS MODE\\n\"");
  for (; c >= '0' && c <= '9'; c = getchar()) value = value * 10 + (c - '0');
  return value;
}

enum { MODE_STORY, MODE_STORY_AND_COUNT, MODE_IDS };

static void print_piece(void* context, int token, const uint8_t* piece, int length) {
  (void)context;
  (void)token;
  fwrite(piece, 1, (size_t)length, stdout);
}

static void print_id(void* context, int token, const uint8_t* piece, int length) {
  (void)context;
  (void)piece;
  (void)length;
  printf("%d\n", token);
}

int main(void) {
  size_t size;
  uint8_t* blob = read_blob(&size);
  StoryModel model;
  const char* error = story_model_open(&model, blob, size);
  if (error) fail(error);
  int steps = read_number();
  int mode = read_number();
  if (mode > MODE_IDS) fail("the request's MODE must be 0, 1 or 2");

  static uint8_t prompt[1024];
  int prompt_bytes = (int)read_bytes(prompt, sizeof prompt);
  if (getchar() != EOF) fail("the prompt is longer than 1024 bytes");
  int* tokens = malloc((size_t)model.seq_len * sizeof(int));
  int count = tokens ? story_encode(&model, prompt, prompt_bytes, tokens, model.seq_len) : -1;
  if (count < 0) fail("the prompt does not fit in the model's context");

  StoryState state;
  if (!story_state_init(&state, &model)) fail("the story model's state does not fit in memory");
  int emitted = story_generate(&model, &state, tokens, count, steps, mode == MODE_IDS ? print_id : print_piece, 0);
  if (mode != MODE_IDS) putchar('\n');
  if (mode == MODE_STORY_AND_COUNT) printf("\x1e%d\n", emitted);
  return 0;
}
