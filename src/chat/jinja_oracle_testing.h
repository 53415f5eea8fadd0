// chat/jinja_oracle_testing.h — tests render the same cases with our engine and with Python's
// Jinja2 (/usr/bin/python3 and the Debian package python3-jinja2, configured as Hugging Face
// configures it: testdata/jinja_oracle.py) and compare the output bytes, or the error kinds.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/jinja_template.h"
#include "toolchain/process.h"

namespace rvformer::chat::testing {

struct OracleCase {
  std::string name;  // shown when the case fails
  std::string template_text;
  nlohmann::ordered_json context = nlohmann::ordered_json::object();
};

// A rendering or its failure, from either engine.
struct Rendering {
  bool ok = false;
  std::string text;     // when ok
  std::string kind;     // error kind name when not ok (jinja::error_kind_name)
  std::string message;  // the error's own text
};

inline Rendering render_ours(const OracleCase& c) {
  Rendering r;
  try {
    const auto tpl = jinja::Template::parse(c.template_text);
    r.text = tpl.render(jinja::from_json(c.context).as_dict());
    r.ok = true;
  } catch (const jinja::TemplateError& e) {
    r.kind = std::string(jinja::error_kind_name(e.kind()));
    r.message = e.message();
  }
  return r;
}

// Renders every case with Python's Jinja2 in one process.
inline std::vector<Rendering> render_with_jinja2(const std::vector<OracleCase>& cases) {
  nlohmann::ordered_json input = nlohmann::ordered_json::array();
  for (const OracleCase& c : cases) input.push_back({{"template", c.template_text}, {"context", c.context}});
  toolchain::TemporaryDirectory directory;
  const auto in_path = directory.path() / "cases.json";
  const auto out_path = directory.path() / "results.json";
  std::ofstream(in_path) << input.dump();
  const auto result = toolchain::run_process({"/usr/bin/python3", RVFORMER_CHAT_TESTDATA "/jinja_oracle.py", in_path.string(), out_path.string()},
                                             {.capture_output = true, .timeout = std::chrono::minutes(5)});
  if (result.exit_status != 0) {
    ADD_FAILURE() << "the Jinja2 oracle failed (is the Debian package python3-jinja2 installed?):\n" << result.standard_error;
    return {};
  }
  if (const char* keep = std::getenv("RVFORMER_KEEP_ORACLE_FILES")) {  // for studying failures
    std::filesystem::copy_file(in_path, std::string(keep) + ".cases.json", std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(out_path, std::string(keep) + ".results.json", std::filesystem::copy_options::overwrite_existing);
  }
  std::ifstream out(out_path);
  std::stringstream text;
  text << out.rdbuf();
  std::vector<Rendering> renderings;
  for (const auto& r : nlohmann::json::parse(text.str())) {
    Rendering rendering;
    rendering.ok = r.at("ok").get<bool>();
    if (rendering.ok) {
      rendering.text = r.at("text").get<std::string>();
    } else {
      rendering.kind = r.at("kind").get<std::string>();
      rendering.message = r.at("message").get<std::string>();
    }
    renderings.push_back(std::move(rendering));
  }
  EXPECT_EQ(renderings.size(), cases.size());
  return renderings;
}

// Byte-identical output, or the same error kind (and, for raise_exception, the same message).
inline void expect_same_as_jinja2(const std::vector<OracleCase>& cases) {
  const std::vector<Rendering> expected = render_with_jinja2(cases);
  ASSERT_EQ(expected.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Rendering ours = render_ours(cases[i]);
    const Rendering& theirs = expected[i];
    SCOPED_TRACE(::testing::Message() << "case " << i << " (" << cases[i].name << "): " << cases[i].template_text
                                    << "\ncontext: " << cases[i].context.dump());
    if (theirs.ok) {
      EXPECT_TRUE(ours.ok) << "ours failed: " << ours.kind << ": " << ours.message;
      EXPECT_EQ(ours.text, theirs.text);
    } else {
      EXPECT_FALSE(ours.ok) << "Jinja2 failed (" << theirs.kind << ": " << theirs.message << ") but ours rendered: " << ours.text;
      EXPECT_EQ(ours.kind, theirs.kind) << "Jinja2: " << theirs.message << "\nours: " << ours.message;
      if (theirs.kind == "raised") {
        EXPECT_EQ(ours.message, theirs.message);
      }
    }
  }
}

}  // namespace rvformer::chat::testing
