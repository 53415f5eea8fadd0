// The merged model's computer answering requests and tool calls: a synthetic base in the published
// layout (the "narrow" shape: the 4B's GDN geometry, hidden 64, the Qwen3 tokenizer and the Qwen3.5
// chat template) merged with the real machine, compiled for it. Programs served over the console
// run inside the merged checkpoint's compiled layers, on a state of their own that persists
// between requests, is saved and restored, and never touches the conversation's state.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "chat/checkpoint_chat.h"
#include "chat/session.h"
#include "chat/tool_calls.h"
#include "emulator/emulator.h"
#include "engine/bitwise_comparison.h"
#include "support/error.h"
#include "tokenizer/reference_tokenizer.h"
#include "toolcall/computer_tool.h"
#include "toolcall/console_program.h"
#include "toolcall/merged_computer.h"
#include "toolcall/merged_testing.h"
#include "toolchain/program_testing.h"

namespace rvformer::toolcall {
namespace {

namespace fs = std::filesystem;

// Counts the requests it served and sums each line's bytes: "#N S" per line, so an answer shows
// whether the program kept its state since the last one. "quit" ends it with status 3, "trap"
// makes it execute an illegal instruction.
const char* const kLineServer = R"(
#include <stdio.h>
#include <string.h>
int main(void) {
  char line[64];
  int served = 0;
  while (fgets(line, sizeof line, stdin)) {
    if (strcmp(line, "quit\n") == 0) return 3;
    if (strcmp(line, "trap\n") == 0) __asm__ volatile(".word 0");
    unsigned sum = 0;
    for (const char* p = line; *p && *p != '\n'; p++) sum += (unsigned char)*p;
    printf("#%d %u\n", ++served, sum);
  }
  return 0;
}
)";

class ToolCallTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!tokenizer::testing::missing_reference_package().empty()) return;
    merged_ = testing::merged_test_checkpoint();
    computer_ = std::make_unique<MergedComputer>(merged_);
  }
  static void TearDownTestSuite() { computer_.reset(); }
  void SetUp() override {
    if (std::string missing = tokenizer::testing::missing_reference_package(); !missing.empty()) GTEST_SKIP() << missing;
  }

  static program::ProgramImage line_server() {
    return toolchain::compile_test_program("line_server", kLineServer, computer_->protocol().spec.memory_map());
  }

  static fs::path merged_;
  static std::unique_ptr<MergedComputer> computer_;
};

fs::path ToolCallTest::merged_;
std::unique_ptr<MergedComputer> ToolCallTest::computer_;

std::string byte_sum(const std::string& text) {
  unsigned sum = 0;
  for (char c : text) sum += static_cast<unsigned char>(c);
  return std::to_string(sum);
}

// What the golden machine prints for `input`, read to its end.
std::string golden_output(const program::ProgramImage& image, const std::string& input) {
  emulator::Emulator golden(image);
  std::size_t next = 0;
  golden.set_input([&] { return next < input.size() ? static_cast<unsigned char>(input[next++]) : -1; });
  std::string output;
  golden.run(100'000'000, [&](std::uint8_t b) { output.push_back(static_cast<char>(b)); });
  return output;
}

TEST_F(ToolCallTest, TheComputerServesOneRequestAtATimeAndKeepsItsStateBetweenThem) {
  const program::ProgramImage image = line_server();
  ConsoleProgram program(*computer_, image);
  EXPECT_FALSE(program.waiting());
  const ConsoleAnswer first = program.request("ab\n");  // starts the program: loading included
  EXPECT_EQ(first.output, "#1 195\n");
  EXPECT_FALSE(first.failure);
  EXPECT_TRUE(program.waiting());
  const ConsoleAnswer second = program.request("xyz\n");
  EXPECT_EQ(second.output, "#2 363\n");
  EXPECT_LT(second.trace_tokens, first.trace_tokens / 4) << "the second request loaded the program again";
  EXPECT_EQ(first.output + second.output + program.request("hello\n").output,
            golden_output(image, "ab\nxyz\nhello\n"));
}

TEST_F(ToolCallTest, AProgramThatStopsIsReportedAndStartsAfreshOnTheNextRequest) {
  ConsoleProgram program(*computer_, line_server());
  EXPECT_EQ(program.request("a\n").output, "#1 97\n");
  const ConsoleAnswer quit = program.request("quit\n");
  ASSERT_TRUE(quit.failure);
  EXPECT_NE(quit.failure->find("exited with status 3"), std::string::npos) << *quit.failure;
  EXPECT_FALSE(program.waiting());
  EXPECT_EQ(program.request("a\n").output, "#1 97\n");
  const ConsoleAnswer trap = program.request("trap\n");
  ASSERT_TRUE(trap.failure);
  EXPECT_NE(trap.failure->find("illegal instruction"), std::string::npos) << *trap.failure;
  EXPECT_EQ(program.request("b\n").output, "#1 98\n");
}

TEST_F(ToolCallTest, TheComputersStateIsSavedAndGoesOnAfterLoading) {
  const fs::path saved = fs::path(::testing::TempDir()) / "toolcall_computer.checkpoint";
  const program::ProgramImage image = line_server();
  {
    ConsoleProgram program(*computer_, image);
    EXPECT_EQ(program.request("a\n").output, "#1 97\n");
    program.save(saved);
  }
  computer_->reset();
  ConsoleProgram resumed(*computer_, image);
  resumed.load(saved);
  EXPECT_TRUE(resumed.waiting());
  EXPECT_EQ(resumed.request("b\n").output, "#2 98\n");

  ConsoleProgram other(*computer_, toolchain::compile_test_program("other", "int main(void) { return 0; }",
                                                                   computer_->protocol().spec.memory_map()));
  try {
    other.load(saved);
    ADD_FAILURE() << "a checkpoint of another program was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("another program"), std::string::npos) << e.what();
  }
}

TEST_F(ToolCallTest, ToolCallsGetAResponseTheModelCanReadWhateverTheyAre) {
  ComputerTool tool(*computer_, line_server(), {.name = "summer", .description = "sums bytes", .parameter = "text",
                                                .parameter_description = "the bytes"});
  tool.start();
  chat::Message assistant{"assistant", "", {}, {}, {}, {}};
  assistant.tool_calls = {{"call-1", "summer", {{"text", "ab"}}},
                          {"call-2", "weather", {{"city", "Oslo"}}},
                          {"call-3", "summer", {{"words", "ab"}}},
                          {"call-4", "summer", {{"text", "two\nlines"}}}};
  const std::vector<chat::Message> responses = chat::answer_tool_calls(assistant, tool);
  ASSERT_EQ(responses.size(), 4u);
  EXPECT_EQ(responses[0].content, "#1 " + byte_sum("ab"));
  EXPECT_EQ(responses[0].role, "tool");
  EXPECT_EQ(responses[0].tool_call_id, "call-1");
  EXPECT_EQ(responses[1].content, "error: there is no tool named 'weather' (tools: summer)");
  EXPECT_EQ(responses[2].content, "error: summer needs a string argument 'text'");
  EXPECT_EQ(responses[3].content, "#2 " + byte_sum("two lines"));  // one request line
}

// A forced tool call in a chat on the merged checkpoint: the computer's answer becomes the tool
// message, and the conversation's state afterwards is exactly the state of a chat that was given
// the same tool message as text, bit for bit; the model then goes on writing.
TEST_F(ToolCallTest, TheConversationReadsTheAnswerAsIfItHadBeenGivenAsText) {
  chat::CheckpointChat with_computer(merged_, {.threads = 1, .engine = chat::ChatEngine::fast});
  chat::CheckpointChat plain(merged_, {.threads = 1, .engine = chat::ChatEngine::fast});
  ComputerTool tool(*computer_, line_server(), {.name = "summer", .description = "sums bytes", .parameter = "text",
                                                .parameter_description = "the bytes"});
  chat::Conversation conversation;
  conversation.tools = chat::offer_tools(nullptr, tool.tools());
  conversation.messages = {{"user", "Sum the bytes of 'hi'.", {}, {}, {}, {}}, {"assistant", "", {}, {}, {}, {}}};
  conversation.messages.back().tool_calls = {{"", "summer", {{"text", "hi"}}}};
  chat::SessionOptions options;
  options.max_new_tokens = 3;
  options.sampling.vocabulary_limit = with_computer.vocabulary_limit();

  chat::ChatSession session(with_computer.chat_template(), with_computer.codec(), with_computer.language_model(), options);
  session.start(conversation);
  ASSERT_TRUE(chat::awaits_tool_responses(session.conversation().messages));
  const std::vector<chat::Message> responses = chat::answer_tool_calls(session.conversation().messages.back(), tool);
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].content, "#1 " + byte_sum("hi"));
  session.add(responses);

  conversation.messages.push_back(responses[0]);
  chat::ChatSession given_as_text(plain.chat_template(), plain.codec(), plain.language_model(), options);
  given_as_text.start(conversation);
  EXPECT_EQ(session.fed_tokens(), given_as_text.fed_tokens());
  const auto& state = dynamic_cast<chat::FastEngineLanguageModel&>(with_computer.language_model()).state();
  const auto& expected = dynamic_cast<chat::FastEngineLanguageModel&>(plain.language_model()).state();
  const auto difference = engine::first_difference(state, expected);
  EXPECT_FALSE(difference) << *difference;
  const chat::Reply reply = session.generate();
  EXPECT_GT(reply.tokens, 0u);
}

}  // namespace
}  // namespace rvformer::toolcall
