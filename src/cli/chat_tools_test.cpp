// cli/chat_tools_test.cpp — `rvformer chat` on a merged checkpoint (the real machine merged into a
// synthetic Qwen3.5 base in the published layout, toolcall/merged_testing.h): the calculator is
// offered as a tool, and a conversation whose assistant turn calls it is continued by the
// computer in the checkpoint's compiled layers writing the exact answer as the tool response, then
// Qwen writing on; the computer's state is saved with the chat; bad calls get readable responses.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_testing.h"
#include "tokenizer/reference_tokenizer.h"
#include "toolcall/merged_testing.h"

namespace rvformer::cli {
namespace {

using nlohmann::ordered_json;

constexpr auto kTimeout = std::chrono::seconds(300);

// A conversation whose last message is the assistant's calls (the model's own choice of calls is
// not what is tested: the base's weights are random).
std::string forced_calls(const ordered_json& calls) {
  ordered_json tool_calls = ordered_json::array();
  for (const auto& [name, arguments] : calls.items()) {
    tool_calls.push_back({{"id", "call_" + std::to_string(tool_calls.size())},
                          {"type", "function"},
                          {"function", {{"name", name.substr(0, name.find('#'))}, {"arguments", arguments.dump()}}}});
  }
  return ordered_json::array({{{"role", "user"}, {"content", "Please compute."}},
                              {{"role", "assistant"}, {"content", ""}, {"tool_calls", tool_calls}}})
      .dump();
}

class ChatTools : public CommandTest {
 protected:
  void SetUp() override {
    if (std::string missing = tokenizer::testing::missing_reference_package(); !missing.empty()) GTEST_SKIP() << missing;
    merged_ = toolcall::testing::merged_test_checkpoint().string();
  }

  // The tool messages of a --json chat's output.
  static std::vector<ordered_json> tool_messages(const std::string& output) {
    std::vector<ordered_json> found;
    for (const auto& message : ordered_json::parse(output))
      if (message.at("role") == "tool") found.push_back(message);
    return found;
  }

  std::string merged_;
};

TEST_F(ChatTools, TheMergedModelAnswersACalculatorCallInsideItsWeightsAndGoesOn) {
  const std::string messages =
      write_source("call.json", forced_calls({{"calculator", {{"expression", "123456789 * 987654321 - 2**70"}}}}));
  const auto result = run_rvformer({"chat", merged_, "--engine", "fast", "--messages", messages, "--no-thinking",
                                    "--max-tokens", "3", "--json"},
                                   kTimeout);
  ASSERT_EQ(result.exit_status, 0) << result.standard_error;
  const ordered_json output = ordered_json::parse(result.standard_output);
  ASSERT_EQ(output.size(), 4u) << output.dump();
  EXPECT_EQ(output[2].at("role"), "tool");
  EXPECT_EQ(output[2].at("tool_call_id"), "call_0");
  // 123456789 * 987654321 - 2**70 in Python.
  EXPECT_EQ(output[2].at("content"), "-1180469688086298668155");
  EXPECT_EQ(output[3].at("role"), "assistant");
  EXPECT_NE(result.standard_error.find("the computer answered in"), std::string::npos) << result.standard_error;
}

TEST_F(ChatTools, ThePromptOffersTheCalculator) {
  const std::string messages = write_source("ask.json", R"([{"role": "user", "content": "2+2?"}])");
  const auto offered = run_rvformer({"chat", merged_, "--print-prompt", "--messages", messages}, kTimeout);
  ASSERT_EQ(offered.exit_status, 0) << offered.standard_error;
  EXPECT_NE(offered.standard_output.find("<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"calculator\""),
            std::string::npos)
      << offered.standard_output;
  const auto plain = run_rvformer({"chat", merged_, "--print-prompt", "--messages", messages, "--no-tools"}, kTimeout);
  ASSERT_EQ(plain.exit_status, 0) << plain.standard_error;
  EXPECT_EQ(plain.standard_output.find("calculator"), std::string::npos) << plain.standard_output;
}

TEST_F(ChatTools, BadCallsAndCalculatorErrorsAreAnswersTheModelReads) {
  const std::string messages =
      write_source("bad.json", forced_calls({{"calculator", {{"expression", "7 / (3 - 3)"}}},
                                             {"calculator#2", {{"expression", "2 +* 3"}}},
                                             {"weather", {{"city", "Oslo"}}},
                                             {"calculator#3", {{"text", "1+1"}}}}));
  const auto result = run_rvformer({"chat", merged_, "--engine", "fast", "--messages", messages, "--no-thinking",
                                    "--max-tokens", "1", "--json"},
                                   kTimeout);
  ASSERT_EQ(result.exit_status, 0) << result.standard_error;
  const std::vector<ordered_json> tools = tool_messages(result.standard_output);
  ASSERT_EQ(tools.size(), 4u) << result.standard_output;
  EXPECT_EQ(tools[0].at("content"), "error: division by zero");
  EXPECT_TRUE(tools[1].at("content").get<std::string>().starts_with("error: syntax error")) << tools[1].dump();
  EXPECT_EQ(tools[2].at("content"), "error: there is no tool named 'weather' (tools: calculator)");
  EXPECT_EQ(tools[3].at("content"), "error: calculator needs a string argument 'expression'");
}

TEST_F(ChatTools, TheComputersStateIsSavedWithTheChatAndGoesOn) {
  const std::string state = path("chat.state");
  const std::string messages = write_source("call.json", forced_calls({{"calculator", {{"expression", "2**64"}}}}));
  const auto first = run_rvformer({"chat", merged_, "--engine", "fast", "--messages", messages, "--no-thinking",
                                   "--max-tokens", "2", "--json", "--state", state},
                                  kTimeout);
  ASSERT_EQ(first.exit_status, 0) << first.standard_error;
  EXPECT_TRUE(std::filesystem::exists(state + ".computer"));
  // Continuing: the computer goes on from its saved state (toolcall_test checks that such a state
  // answers the next call); the firmware is not loaded again.
  const std::string user_turn = write_source("user.json", R"([{"role": "user", "content": "And 10**20 // 7?"}])");
  const auto second = run_rvformer({"chat", merged_, "--engine", "fast", "--messages", user_turn, "--no-thinking",
                                    "--max-tokens", "2", "--json", "--state", state},
                                   kTimeout);
  ASSERT_EQ(second.exit_status, 0) << second.standard_error;
  EXPECT_EQ(second.standard_error.find("loading the calculator"), std::string::npos)
      << "a continued chat loaded the firmware again:\n" << second.standard_error;
  const std::vector<ordered_json> tools = tool_messages(second.standard_output);
  ASSERT_GE(tools.size(), 1u);
  EXPECT_EQ(tools[0].at("content"), "18446744073709551616");
}

// The machine with the big-integer unit merged instead: the chat's calculator runs the firmware built
// for it, which multiplies with the unit, inside the merged model.
TEST_F(ChatTools, AMergedBigintMachineAnswersWithItsUnit) {
  const std::string merged = toolcall::testing::merged_test_checkpoint(program::kBigintMachine).string();
  std::string a(150, '7'), b = "9" + std::string(149, '3');
  const std::string messages =
      write_source("call.json", forced_calls({{"calculator", {{"expression", a + " * " + b}}}}));
  const auto result = run_rvformer({"chat", merged, "--engine", "fast", "--messages", messages, "--no-thinking",
                                    "--max-tokens", "2", "--json"},
                                   kTimeout);
  ASSERT_EQ(result.exit_status, 0) << result.standard_error;
  const std::vector<ordered_json> tools = tool_messages(result.standard_output);
  ASSERT_EQ(tools.size(), 1u);
  // 7…7 (150 sevens) · 93…3 (a nine and 149 threes) in Python.
  const auto expected = run_rvformer({"calc", "--on", "emulator", "--machine", "rvformer", a + " * " + b}, kTimeout);
  ASSERT_EQ(expected.exit_status, 0) << expected.standard_error;
  EXPECT_EQ(tools[0].at("content").get<std::string>() + "\n", expected.standard_output);
  // The call ran the unit's firmware: its instruction count (the call's, without start-up) is nearer
  // the unit's whole run on the emulator than the plain machine's.
  auto instructions = [](const std::string& stderr_text) {
    return ordered_json::parse(stderr_text.substr(stderr_text.rfind('{'))).at("instructions").get<std::uint64_t>();
  };
  const auto plain = run_rvformer({"calc", "--on", "emulator", "--stats", a + " * " + b}, kTimeout);
  const auto unit = run_rvformer({"calc", "--on", "emulator", "--stats", "--machine", "rvformer-bigint", a + " * " + b},
                                 kTimeout);
  const std::uint64_t plain_run = instructions(plain.standard_error), unit_run = instructions(unit.standard_error);
  ASSERT_LT(unit_run + 2000, plain_run);
  const std::string& log = result.standard_error;
  const std::size_t end = log.rfind(" instructions)");
  ASSERT_NE(end, std::string::npos) << log;
  const std::uint64_t call = std::stoull(log.substr(log.rfind('(', end) + 1));
  EXPECT_LE(call, unit_run);
  EXPECT_GT(call + 2000, unit_run);
}

}  // namespace
}  // namespace rvformer::cli
