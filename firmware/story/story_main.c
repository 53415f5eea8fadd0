/* firmware/story/story_main.c — the story program's main (RV32IM firmware only; the host links the
 * rest of firmware/story/ as the reference). Console input: the model blob (story_model.h; in the
 * plain build only, the vector build finds it in its weight memory), then a request line
 * "STEPS MODE\n", then the prompt's bytes up to the end of input. It prints each
 * generated token's piece as it is produced and a final newline, as llama2.c's run does; MODE 1 then
 * adds a record separator (0x1E), the number of story tokens and a newline, for
 * `rvformer story --stats`; MODE 2 prints each token's id and a newline instead of its piece, for
 * tests. Any failure is one line "error: ..." and exit status 1. The same main serves both builds
 * (story_build.h): the plain RV32IM one and the vector unit's. */
#include <stdio.h>
#include <stdlib.h>

#include "story_build.h"

static void fail(const char* message) {
  printf("error: %s\n", message);
  exit(1);
}

static int read_number(void) {
  int value = 0, c;
  while ((c = getchar()) == ' ') {
  }
  if (c < '0' || c > '9') fail("the request must be \"STEPS MODE\\n\"");
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
  StoryModel model;
  const char* error = story_model_load(&model);
  if (error) fail(error);
  int steps = read_number();
  int mode = read_number();
  if (mode > MODE_IDS) fail("the request's MODE must be 0, 1 or 2");

  static uint8_t prompt[1024];
  int prompt_bytes = (int)story_read_input(prompt, sizeof prompt);
  if (getchar() != EOF) fail("the prompt is longer than 1024 bytes");
  int* tokens = malloc((size_t)model.seq_len * sizeof(int));
  int count = tokens ? story_encode(&model, prompt, prompt_bytes, tokens, model.seq_len) : -1;
  if (count < 0) fail("the prompt does not fit in the model's context");

  StoryState state;
  if ((error = story_state_init(&state, &model))) fail(error);
  int emitted = story_generate(&model, &state, tokens, count, steps, mode == MODE_IDS ? print_id : print_piece, 0);
  if (mode != MODE_IDS) putchar('\n');
  if (mode == MODE_STORY_AND_COUNT) printf("\x1e%d\n", emitted);
  return 0;
}
