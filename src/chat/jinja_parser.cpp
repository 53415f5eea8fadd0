// chat/jinja_parser.cpp — Jinja's grammar over the lexer's tokens, with Jinja's precedence
// (loosest first): conditional `a if b else c`, `or`, `and`, `not`, comparisons and `in`, `+ -`,
// `~`, `* / // %`, `**` (left-associative), unary `- +`, then postfix `.x [i] (args)`, filters
// `|f` and tests `is t`. An unknown filter or test is an error when the template is parsed unless
// it sits in conditional code (an `if` or a conditional expression), where Jinja reports it only
// when evaluated.
#include <initializer_list>

#include <fmt/format.h>

#include "chat/jinja_builtins.h"
#include "chat/jinja_parser.h"

namespace rvformer::chat::jinja {

namespace {

std::string describe(const Token& token) {
  switch (token.type) {
    case TokenType::data: return "template data";
    case TokenType::variable_begin: return "begin of print statement";
    case TokenType::variable_end: return "end of print statement";
    case TokenType::block_begin: return "begin of statement block";
    case TokenType::block_end: return "end of statement block";
    case TokenType::end: return "end of template";
    case TokenType::string: return "string";
    case TokenType::integer: return "integer";
    case TokenType::floating: return "float";
    default: return token.text;
  }
}

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, std::string_view source_name) : tokens_(tokens), source_name_(source_name) {}

  Body parse_template() {
    Body body = subparse({});
    if (cur().type != TokenType::end) fail(fmt::format("unexpected '{}'", describe(cur())));
    for (const Unresolved& u : unresolved_) {
      if (!u.conditional) throw TemplateError(u.kind, source_name_, u.line, u.message);
    }
    return body;
  }

 private:
  struct Unresolved {
    ErrorKind kind;
    int line;
    std::string message;
    bool conditional;
  };

  const Token& cur() const { return tokens_[index_]; }
  const Token& peek() const { return tokens_[std::min(index_ + 1, tokens_.size() - 1)]; }
  void advance() {
    if (index_ + 1 < tokens_.size()) ++index_;
  }
  bool is_op(std::string_view op) const { return cur().type == TokenType::op && cur().text == op; }
  bool is_name(std::string_view name) const { return cur().type == TokenType::name && cur().text == name; }

  [[noreturn]] void fail(const std::string& message) const { fail_at(cur().line, message); }
  [[noreturn]] void fail_at(int line, const std::string& message) const {
    throw TemplateError(ErrorKind::syntax, source_name_, line, message);
  }
  [[noreturn]] void unsupported(int line, const std::string& message) const {
    throw TemplateError(ErrorKind::unsupported, source_name_, line, message);
  }

  void expect_op(std::string_view op) {
    if (!is_op(op)) fail(fmt::format("expected token '{}', got '{}'", op, describe(cur())));
    advance();
  }
  void expect(TokenType type, std::string_view what) {
    if (cur().type != type) fail(fmt::format("expected token '{}', got '{}'", what, describe(cur())));
    advance();
  }
  void expect_block_end() { expect(TokenType::block_end, "end of statement block"); }
  std::string expect_name() {
    if (cur().type != TokenType::name) fail(fmt::format("expected token 'name', got '{}'", describe(cur())));
    std::string name = cur().text;
    advance();
    return name;
  }
  void expect_tag(std::string_view name) {
    if (!is_name(name)) fail(fmt::format("expected token '{}', got '{}'", name, describe(cur())));
    advance();
  }

  // Statements until a block whose tag is one of `end_tags`; stops with that tag's name current.
  Body subparse(std::initializer_list<std::string_view> end_tags) {
    Body body;
    while (true) {
      const Token& token = cur();
      switch (token.type) {
        case TokenType::data:
          body.push_back(std::make_unique<TextNode>(token.line, token.text));
          advance();
          break;
        case TokenType::variable_begin: {
          advance();
          ExprPtr expr = parse_tuple(true);
          expect(TokenType::variable_end, "end of print statement");
          body.push_back(std::make_unique<PrintNode>(token.line, std::move(expr)));
          break;
        }
        case TokenType::block_begin: {
          advance();
          for (std::string_view tag : end_tags) {
            if (is_name(tag)) return body;
          }
          body.push_back(parse_statement());
          expect_block_end();
          break;
        }
        case TokenType::end: {
          if (end_tags.size() == 0) return body;
          std::string wanted;
          for (std::string_view tag : end_tags) wanted += fmt::format("{}'{}'", wanted.empty() ? "" : " or ", tag);
          fail(fmt::format("Unexpected end of template. Jinja was looking for the following tags: {}.", wanted));
        }
        default:
          fail(fmt::format("unexpected '{}'", describe(token)));
      }
    }
  }

  // Bounds the parser's recursion: templates come from files, and a stack overflow is no error.
  class Nesting {
   public:
    explicit Nesting(Parser& p) : p_(p) {
      if (++p.nesting_ > 200) p.fail("the template nests statements or expressions more than 200 levels deep");
    }
    ~Nesting() { --p_.nesting_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    Parser& p_;
  };

  // A for loop's else branch and a macro body are no loop: break and continue are errors there.
  Body subparse_outside_loops(std::initializer_list<std::string_view> end_tags) {
    const int saved = loop_depth_;
    loop_depth_ = 0;
    Body body = subparse(end_tags);
    loop_depth_ = saved;
    return body;
  }

  NodePtr parse_statement() {
    const Nesting nesting(*this);
    if (cur().type != TokenType::name) fail("tag name expected");
    const std::string tag = cur().text;
    const int line = cur().line;
    if (tag == "for") return parse_for();
    if (tag == "if") return parse_if();
    if (tag == "set") return parse_set();
    if (tag == "macro") return parse_macro();
    if (tag == "with") return parse_with();
    if (tag == "filter") return parse_filter_block();
    if (tag == "generation") return parse_generation();
    if (tag == "break" || tag == "continue") {
      if (loop_depth_ == 0) fail_at(line, fmt::format("'{}' outside loop", tag));
      advance();
      return std::make_unique<LoopControlNode>(line, tag == "break" ? Flow::break_loop : Flow::continue_loop);
    }
    for (std::string_view known : {"call", "include", "import", "from", "extends", "block", "autoescape"}) {
      if (tag == known) unsupported(line, fmt::format("the '{}' tag is not supported by this template engine", tag));
    }
    fail(fmt::format("Encountered unknown tag '{}'.", tag));
  }

  AssignTarget parse_assign_target(bool with_namespace, std::initializer_list<std::string_view> end_names = {}) {
    AssignTarget target;
    if (with_namespace && cur().type == TokenType::name && peek().type == TokenType::op && peek().text == ".") {
      target.names.push_back(expect_name());
      advance();
      target.attribute = expect_name();
      return target;
    }
    const bool parenthesized = is_op("(");
    if (parenthesized) advance();
    while (true) {
      const std::string name = expect_name();
      if (name == "true" || name == "false" || name == "none" || name == "True" || name == "False" || name == "None") {
        fail("can't assign to 'const'");
      }
      target.names.push_back(name);
      if (!is_op(",")) break;
      advance();
      target.unpack = true;
      if (cur().type != TokenType::name) break;
      bool at_end = false;
      for (std::string_view end : end_names) at_end = at_end || is_name(end);
      if (at_end) break;
    }
    if (parenthesized) expect_op(")");
    return target;
  }

  NodePtr parse_for() {
    auto node = std::make_unique<ForNode>(cur().line);
    advance();
    node->target = parse_assign_target(false, {"in"});
    expect_tag("in");
    node->iterable = parse_tuple(false, {"recursive"});
    if (is_name("if")) {
      advance();
      node->filter = parse_expression(true);
    }
    if (is_name("recursive")) unsupported(cur().line, "recursive loops are not supported by this template engine");
    expect_block_end();
    ++loop_depth_;
    node->body = subparse({"endfor", "else"});
    --loop_depth_;
    if (is_name("else")) {
      advance();
      expect_block_end();
      node->else_body = subparse_outside_loops({"endfor"});
    }
    expect_tag("endfor");
    return node;
  }

  NodePtr parse_if() {
    auto node = std::make_unique<IfNode>(cur().line);
    advance();
    ++conditional_depth_;
    while (true) {
      ExprPtr condition = parse_tuple(false);
      expect_block_end();
      Body body = subparse({"elif", "else", "endif"});
      node->branches.emplace_back(std::move(condition), std::move(body));
      if (is_name("elif")) {
        advance();
        continue;
      }
      if (is_name("else")) {
        advance();
        expect_block_end();
        node->else_body = subparse({"endif"});
      }
      break;
    }
    --conditional_depth_;
    expect_tag("endif");
    return node;
  }

  NodePtr parse_set() {
    const int line = cur().line;
    advance();
    AssignTarget target = parse_assign_target(true);
    if (is_op("=")) {
      advance();
      auto node = std::make_unique<SetNode>(line);
      node->target = std::move(target);
      node->value = parse_tuple(true);
      return node;
    }
    auto node = std::make_unique<SetBlockNode>(line);
    node->target = std::move(target);
    node->filters = parse_filter_chain();
    expect_block_end();
    node->body = subparse({"endset"});
    expect_tag("endset");
    return node;
  }

  NodePtr parse_macro() {
    auto node = std::make_unique<MacroNode>(cur().line);
    advance();
    node->name = expect_name();
    expect_op("(");
    bool seen_default = false;
    while (!is_op(")")) {
      if (!node->parameters.empty()) expect_op(",");
      if (is_op(")")) break;
      std::string name = expect_name();
      ExprPtr default_value;
      if (is_op("=")) {
        advance();
        default_value = parse_expression(true);
        seen_default = true;
      } else if (seen_default) {
        fail("non-default argument follows default argument");
      }
      node->parameters.emplace_back(std::move(name), std::move(default_value));
    }
    expect_op(")");
    expect_block_end();
    node->body = subparse_outside_loops({"endmacro"});
    expect_tag("endmacro");
    return node;
  }

  NodePtr parse_with() {
    auto node = std::make_unique<WithNode>(cur().line);
    advance();
    while (cur().type != TokenType::block_end) {
      if (!node->assignments.empty()) expect_op(",");
      std::string name = expect_name();
      expect_op("=");
      node->assignments.emplace_back(std::move(name), parse_expression(true));
    }
    expect_block_end();
    node->body = subparse({"endwith"});
    expect_tag("endwith");
    return node;
  }

  NodePtr parse_filter_block() {
    auto node = std::make_unique<FilterBlockNode>(cur().line);
    advance();
    node->filters.push_back(parse_filter(nullptr));
    for (auto& more : parse_filter_chain()) node->filters.push_back(std::move(more));
    expect_block_end();
    node->body = subparse({"endfilter"});
    expect_tag("endfilter");
    return node;
  }

  NodePtr parse_generation() {
    auto node = std::make_unique<FilterBlockNode>(cur().line);
    advance();
    expect_block_end();
    node->body = subparse({"endgeneration"});
    expect_tag("endgeneration");
    return node;
  }

  std::vector<std::unique_ptr<FilterExpr>> parse_filter_chain() {
    std::vector<std::unique_ptr<FilterExpr>> filters;
    while (is_op("|")) {
      advance();
      filters.push_back(parse_filter(nullptr));
    }
    return filters;
  }

  // Expressions.

  bool at_tuple_end(std::initializer_list<std::string_view> end_names) const {
    if (cur().type == TokenType::variable_end || cur().type == TokenType::block_end || is_op(")")) return true;
    for (std::string_view name : end_names) {
      if (is_name(name)) return true;
    }
    return false;
  }

  ExprPtr parse_tuple(bool with_condexpr, std::initializer_list<std::string_view> end_names = {},
                      bool explicit_parentheses = false) {
    const int line = cur().line;
    std::vector<ExprPtr> items;
    bool is_tuple = false;
    while (true) {
      if (!items.empty()) expect_op(",");
      if (at_tuple_end(end_names)) break;
      items.push_back(parse_expression(with_condexpr));
      if (!is_op(",")) break;
      is_tuple = true;
    }
    if (!is_tuple) {
      if (!items.empty()) return std::move(items.front());
      if (!explicit_parentheses) fail(fmt::format("Expected an expression, got '{}'", describe(cur())));
    }
    return std::make_unique<SequenceExpr>(line, std::move(items), true);
  }

  ExprPtr parse_expression(bool with_condexpr) { return with_condexpr ? parse_condexpr() : parse_or(); }

  ExprPtr parse_condexpr() {
    const std::size_t first_unresolved = unresolved_.size();
    ExprPtr expr = parse_or();
    while (is_name("if")) {
      const int line = cur().line;
      advance();
      ++conditional_depth_;
      auto node = std::make_unique<ConditionalExpr>(line);
      node->condition = parse_or();
      if (is_name("else")) {
        advance();
        node->else_value = parse_condexpr();
      }
      --conditional_depth_;
      for (std::size_t i = first_unresolved; i < unresolved_.size(); ++i) unresolved_[i].conditional = true;
      node->then_value = std::move(expr);
      expr = std::move(node);
    }
    return expr;
  }

  ExprPtr parse_or() { return parse_logical("or", false, [this] { return parse_and(); }); }
  ExprPtr parse_and() { return parse_logical("and", true, [this] { return parse_not(); }); }

  template <typename Operand>
  ExprPtr parse_logical(std::string_view keyword, bool is_and, Operand operand) {
    ExprPtr left = operand();
    while (is_name(keyword)) {
      const int line = cur().line;
      advance();
      left = std::make_unique<LogicalExpr>(line, is_and, std::move(left), operand());
    }
    return left;
  }

  ExprPtr parse_not() {
    if (is_name("not")) {
      const int line = cur().line;
      advance();
      return std::make_unique<UnaryExpr>(line, UnaryOp::logical_not, parse_not());
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    const int line = cur().line;
    ExprPtr first = parse_math1();
    auto node = std::make_unique<CompareExpr>(line, std::move(first));
    while (true) {
      CompareOp op;
      if (is_op("==")) {
        op = CompareOp::equal;
      } else if (is_op("!=")) {
        op = CompareOp::not_equal;
      } else if (is_op("<")) {
        op = CompareOp::less;
      } else if (is_op("<=")) {
        op = CompareOp::less_equal;
      } else if (is_op(">")) {
        op = CompareOp::greater;
      } else if (is_op(">=")) {
        op = CompareOp::greater_equal;
      } else if (is_name("in")) {
        op = CompareOp::in;
      } else if (is_name("not") && peek().type == TokenType::name && peek().text == "in") {
        advance();
        op = CompareOp::not_in;
      } else {
        break;
      }
      advance();
      node->rest.emplace_back(op, parse_math1());
    }
    if (node->rest.empty()) return std::move(node->first);
    return node;
  }

  ExprPtr parse_math1() {
    ExprPtr left = parse_concat();
    while (is_op("+") || is_op("-")) {
      const Arithmetic op = is_op("+") ? Arithmetic::add : Arithmetic::subtract;
      const int line = cur().line;
      advance();
      left = std::make_unique<BinaryExpr>(line, op, std::move(left), parse_concat());
    }
    return left;
  }

  ExprPtr parse_concat() {
    ExprPtr left = parse_math2();
    while (is_op("~")) {
      const int line = cur().line;
      advance();
      left = std::make_unique<ConcatExpr>(line, std::move(left), parse_math2());
    }
    return left;
  }

  ExprPtr parse_math2() {
    ExprPtr left = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Arithmetic op = is_op("*") ? Arithmetic::multiply : is_op("/") ? Arithmetic::divide
                            : is_op("//") ? Arithmetic::floor_divide : Arithmetic::modulo;
      const int line = cur().line;
      advance();
      left = std::make_unique<BinaryExpr>(line, op, std::move(left), parse_pow());
    }
    return left;
  }

  ExprPtr parse_pow() {
    ExprPtr left = parse_unary(true);
    while (is_op("**")) {
      const int line = cur().line;
      advance();
      left = std::make_unique<BinaryExpr>(line, Arithmetic::power, std::move(left), parse_unary(true));
    }
    return left;
  }

  ExprPtr parse_unary(bool with_filter) {
    const Nesting nesting(*this);
    const int line = cur().line;
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
      const UnaryOp op = is_op("-") ? UnaryOp::negate : UnaryOp::plus;
      advance();
      node = std::make_unique<UnaryExpr>(line, op, parse_unary(false));
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
  }

  ExprPtr parse_primary() {
    const Token& token = cur();
    const int line = token.line;
    switch (token.type) {
      case TokenType::name: {
        const std::string& n = token.text;
        advance();
        if (n == "true" || n == "True") return std::make_unique<Literal>(line, Value(true));
        if (n == "false" || n == "False") return std::make_unique<Literal>(line, Value(false));
        if (n == "none" || n == "None") return std::make_unique<Literal>(line, Value::none());
        return std::make_unique<NameRef>(line, n);
      }
      case TokenType::string: {
        std::string text;
        while (cur().type == TokenType::string) {
          text += cur().text;
          advance();
        }
        return std::make_unique<Literal>(line, Value(std::move(text)));
      }
      case TokenType::integer:
        advance();
        return std::make_unique<Literal>(line, Value(token.integer));
      case TokenType::floating:
        advance();
        return std::make_unique<Literal>(line, Value(token.floating));
      default: break;
    }
    if (is_op("(")) {
      advance();
      ExprPtr inner = parse_tuple(true, {}, true);
      expect_op(")");
      return inner;
    }
    if (is_op("[")) return parse_list();
    if (is_op("{")) return parse_dict();
    fail(fmt::format("unexpected '{}'", describe(token)));
  }

  ExprPtr parse_list() {
    const int line = cur().line;
    advance();
    std::vector<ExprPtr> items;
    while (!is_op("]")) {
      if (!items.empty()) expect_op(",");
      if (is_op("]")) break;
      items.push_back(parse_expression(true));
    }
    expect_op("]");
    return std::make_unique<SequenceExpr>(line, std::move(items), false);
  }

  ExprPtr parse_dict() {
    auto node = std::make_unique<DictExpr>(cur().line);
    advance();
    while (!is_op("}")) {
      if (!node->entries.empty()) expect_op(",");
      if (is_op("}")) break;
      ExprPtr key = parse_expression(true);
      expect_op(":");
      node->entries.emplace_back(std::move(key), parse_expression(true));
    }
    expect_op("}");
    return node;
  }

  ExprPtr parse_postfix(ExprPtr node) {
    while (true) {
      if (is_op(".") || is_op("[")) {
        node = parse_subscript(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr node) {
    const int line = cur().line;
    if (is_op(".")) {
      advance();
      if (cur().type == TokenType::name) return std::make_unique<AttributeExpr>(line, std::move(node), expect_name());
      if (cur().type == TokenType::integer) {
        const std::int64_t index = cur().integer;
        advance();
        return std::make_unique<ItemExpr>(line, std::move(node), std::make_unique<Literal>(line, Value(index)));
      }
      fail("expected name or number");
    }
    advance();  // '['
    ExprPtr start;
    if (!is_op(":")) {
      start = parse_expression(true);
      if (!is_op(":")) {
        if (is_op(",")) start = parse_tuple_subscript(line, std::move(start));
        expect_op("]");
        return std::make_unique<ItemExpr>(line, std::move(node), std::move(start));
      }
    }
    auto slice = std::make_unique<SliceExpr>(line);
    slice->object = std::move(node);
    slice->start = std::move(start);
    advance();  // ':'
    if (!is_op("]") && !is_op(":")) slice->stop = parse_expression(true);
    if (is_op(":")) {
      advance();
      if (!is_op("]")) slice->step = parse_expression(true);
    }
    expect_op("]");
    return slice;
  }

  // x[a, b]: the key is the tuple (a, b).
  ExprPtr parse_tuple_subscript(int line, ExprPtr first) {
    std::vector<ExprPtr> items;
    items.push_back(std::move(first));
    while (is_op(",")) {
      advance();
      if (is_op("]")) break;
      items.push_back(parse_expression(true));
      if (is_op(":")) unsupported(line, "slices inside tuple subscripts are not supported by this template engine");
    }
    return std::make_unique<SequenceExpr>(line, std::move(items), true);
  }

  CallArguments parse_call_arguments() {
    CallArguments arguments;
    expect_op("(");
    while (!is_op(")")) {
      if (!arguments.positional.empty() || !arguments.keyword.empty()) {
        expect_op(",");
        if (is_op(")")) break;
      }
      if (is_op("*") || is_op("**")) unsupported(cur().line, "*args and **kwargs in calls are not supported by this template engine");
      if (cur().type == TokenType::name && peek().type == TokenType::op && peek().text == "=") {
        std::string key = expect_name();
        advance();
        arguments.keyword.emplace_back(std::move(key), parse_expression(true));
      } else {
        if (!arguments.keyword.empty()) fail("invalid syntax for function call expression");
        arguments.positional.push_back(parse_expression(true));
      }
    }
    expect_op(")");
    return arguments;
  }

  ExprPtr parse_call(ExprPtr callee) {
    auto node = std::make_unique<CallExpr>(cur().line, std::move(callee));
    node->arguments = parse_call_arguments();
    return node;
  }

  ExprPtr parse_filter_expr(ExprPtr node) {
    while (true) {
      if (is_op("|")) {
        advance();
        node = parse_filter(std::move(node));
      } else if (is_name("is")) {
        node = parse_test(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  std::string parse_dotted_name() {
    std::string name = expect_name();
    while (is_op(".")) {
      advance();
      name += '.';
      name += expect_name();
    }
    return name;
  }

  void record_unresolved(ErrorKind kind, int line, std::string message) {
    unresolved_.push_back(Unresolved{kind, line, std::move(message), conditional_depth_ > 0});
  }

  // After the `|`.
  std::unique_ptr<FilterExpr> parse_filter(ExprPtr input) {
    const int line = cur().line;
    auto node = std::make_unique<FilterExpr>(line, std::move(input), parse_dotted_name());
    node->function = find_filter(node->name);
    if (!node->function) {
      if (is_unsupported_filter(node->name)) {
        record_unresolved(ErrorKind::unsupported, line, fmt::format("the filter '{}' is not supported by this template engine", node->name));
      } else {
        record_unresolved(ErrorKind::assertion, line, fmt::format("No filter named '{}'.", node->name));
      }
    }
    if (is_op("(")) node->arguments = parse_call_arguments();
    return node;
  }

  ExprPtr parse_test(ExprPtr input) {
    const int line = cur().line;
    advance();  // 'is'
    bool negated = false;
    if (is_name("not")) {
      advance();
      negated = true;
    }
    auto node = std::make_unique<TestExpr>(line, std::move(input), parse_dotted_name());
    node->negated = negated;
    node->function = find_test(node->name);
    if (!node->function) {
      if (is_unsupported_test(node->name)) {
        record_unresolved(ErrorKind::unsupported, line, fmt::format("the test '{}' is not supported by this template engine", node->name));
      } else {
        record_unresolved(ErrorKind::assertion, line, fmt::format("No test named '{}'.", node->name));
      }
    }
    if (is_op("(")) {
      node->arguments = parse_call_arguments();
    } else if ((cur().type == TokenType::name || cur().type == TokenType::string || cur().type == TokenType::integer ||
                cur().type == TokenType::floating || is_op("[") || is_op("{")) &&
               !is_name("else") && !is_name("or") && !is_name("and")) {
      if (is_name("is")) fail("You cannot chain multiple tests with is");
      node->arguments.positional.push_back(parse_postfix(parse_primary()));
    }
    return node;
  }

  const std::vector<Token>& tokens_;
  std::string_view source_name_;
  std::size_t index_ = 0;
  int loop_depth_ = 0;
  int conditional_depth_ = 0;
  int nesting_ = 0;
  std::vector<Unresolved> unresolved_;
};

}  // namespace

Body parse(const std::vector<Token>& tokens, std::string_view source_name) {
  return Parser(tokens, source_name).parse_template();
}

}  // namespace rvformer::chat::jinja
