// chat/qwen35_template.h — the chat template Qwen3.5-4B ships (chat_template.jinja, 7,756 bytes,
// SHA-256 a4aee8af…f715; its origin is in docs/chat.md). The project's synthetic checkpoints
// carry it byte for byte; `rvformer chat` always uses the checkpoint's own template.
#pragma once

#include <string_view>

namespace rvformer::chat {

std::string_view qwen35_chat_template();

}  // namespace rvformer::chat
