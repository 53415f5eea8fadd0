// chat/jinja_syntax.h — the parsed form of a template: expressions that evaluate to values and
// statements that write output. The parser (jinja_parser.cpp) builds it; the renderer
// (jinja_render.cpp) defines what each node does.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja_value.h"

namespace rvformer::chat::jinja {

class Interpreter;

struct Expr {
  explicit Expr(int l) : line(l) {}
  virtual ~Expr() = default;
  virtual Value eval(Interpreter& in) const = 0;
  int line;
};
using ExprPtr = std::unique_ptr<Expr>;

struct CallArguments {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
  Arguments eval(Interpreter& in) const;
};

struct Literal : Expr {
  Literal(int l, Value v) : Expr(l), value(std::move(v)) {}
  Value eval(Interpreter& in) const override;
  Value value;
};

struct NameRef : Expr {
  NameRef(int l, std::string n) : Expr(l), name(std::move(n)) {}
  Value eval(Interpreter& in) const override;
  std::string name;
};

struct SequenceExpr : Expr {
  SequenceExpr(int l, std::vector<ExprPtr> i, bool t) : Expr(l), items(std::move(i)), tuple(t) {}
  Value eval(Interpreter& in) const override;
  std::vector<ExprPtr> items;
  bool tuple;
};

struct DictExpr : Expr {
  explicit DictExpr(int l) : Expr(l) {}
  Value eval(Interpreter& in) const override;
  std::vector<std::pair<ExprPtr, ExprPtr>> entries;
};

struct AttributeExpr : Expr {
  AttributeExpr(int l, ExprPtr o, std::string n) : Expr(l), object(std::move(o)), name(std::move(n)) {}
  Value eval(Interpreter& in) const override;
  ExprPtr object;
  std::string name;
};

struct ItemExpr : Expr {
  ItemExpr(int l, ExprPtr o, ExprPtr k) : Expr(l), object(std::move(o)), key(std::move(k)) {}
  Value eval(Interpreter& in) const override;
  ExprPtr object, key;
};

struct SliceExpr : Expr {
  explicit SliceExpr(int l) : Expr(l) {}
  Value eval(Interpreter& in) const override;
  ExprPtr object, start, stop, step;  // bounds may be null
};

struct CallExpr : Expr {
  CallExpr(int l, ExprPtr c) : Expr(l), callee(std::move(c)) {}
  Value eval(Interpreter& in) const override;
  ExprPtr callee;
  CallArguments arguments;
};

using FilterFunction = Value (*)(const Value& input, Arguments& args);
using TestFunction = bool (*)(const Value& input, Arguments& args);

// A filter or test the parser could not resolve fails when evaluated (Jinja defers that error
// inside conditional code; elsewhere the parser has already refused the template).
struct FilterExpr : Expr {
  FilterExpr(int l, ExprPtr i, std::string n) : Expr(l), input(std::move(i)), name(std::move(n)) {}
  Value eval(Interpreter& in) const override;
  Value apply(Interpreter& in, const Value& value) const;  // the filter on a given value
  ExprPtr input;  // null for the filters of a filter or set block
  std::string name;
  FilterFunction function = nullptr;
  CallArguments arguments;
};

struct TestExpr : Expr {
  TestExpr(int l, ExprPtr i, std::string n) : Expr(l), input(std::move(i)), name(std::move(n)) {}
  Value eval(Interpreter& in) const override;
  ExprPtr input;
  std::string name;
  TestFunction function = nullptr;
  bool negated = false;
  CallArguments arguments;
};

enum class UnaryOp { negate, plus, logical_not };
struct UnaryExpr : Expr {
  UnaryExpr(int l, UnaryOp o, ExprPtr e) : Expr(l), op(o), operand(std::move(e)) {}
  Value eval(Interpreter& in) const override;
  UnaryOp op;
  ExprPtr operand;
};

struct BinaryExpr : Expr {
  BinaryExpr(int l, Arithmetic o, ExprPtr a, ExprPtr b) : Expr(l), op(o), left(std::move(a)), right(std::move(b)) {}
  Value eval(Interpreter& in) const override;
  Arithmetic op;
  ExprPtr left, right;
};

// `a ~ b`: str(a) + str(b).
struct ConcatExpr : Expr {
  ConcatExpr(int l, ExprPtr a, ExprPtr b) : Expr(l), left(std::move(a)), right(std::move(b)) {}
  Value eval(Interpreter& in) const override;
  ExprPtr left, right;
};

// `and` / `or`, which yield one of their operands as Python does.
struct LogicalExpr : Expr {
  LogicalExpr(int l, bool a, ExprPtr x, ExprPtr y) : Expr(l), is_and(a), left(std::move(x)), right(std::move(y)) {}
  Value eval(Interpreter& in) const override;
  bool is_and;
  ExprPtr left, right;
};

enum class CompareOp { equal, not_equal, less, less_equal, greater, greater_equal, in, not_in };
// Python chains comparisons: a < b < c means a < b and b < c.
struct CompareExpr : Expr {
  CompareExpr(int l, ExprPtr f) : Expr(l), first(std::move(f)) {}
  Value eval(Interpreter& in) const override;
  ExprPtr first;
  std::vector<std::pair<CompareOp, ExprPtr>> rest;
};

struct ConditionalExpr : Expr {
  explicit ConditionalExpr(int l) : Expr(l) {}
  Value eval(Interpreter& in) const override;
  ExprPtr condition, then_value, else_value;  // else_value may be null: undefined
};

// Statements. render() returns how control leaves it: normally, or by break / continue.
enum class Flow { normal, break_loop, continue_loop };

struct Node {
  explicit Node(int l) : line(l) {}
  virtual ~Node() = default;
  virtual Flow render(Interpreter& in) const = 0;
  int line;
};
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct TextNode : Node {
  TextNode(int l, std::string t) : Node(l), text(std::move(t)) {}
  Flow render(Interpreter& in) const override;
  std::string text;
};

struct PrintNode : Node {
  PrintNode(int l, ExprPtr e) : Node(l), expr(std::move(e)) {}
  Flow render(Interpreter& in) const override;
  ExprPtr expr;
};

struct IfNode : Node {
  explicit IfNode(int l) : Node(l) {}
  Flow render(Interpreter& in) const override;
  std::vector<std::pair<ExprPtr, Body>> branches;  // if, then each elif
  Body else_body;
};

// Where `for` and `set` put values: one name, several names to unpack, or a namespace attribute.
struct AssignTarget {
  std::vector<std::string> names;
  bool unpack = false;
  std::string attribute;  // non-empty: names[0].attribute (namespaces only)
};

struct ForNode : Node {
  explicit ForNode(int l) : Node(l) {}
  Flow render(Interpreter& in) const override;
  AssignTarget target;
  ExprPtr iterable;
  ExprPtr filter;  // `for x in xs if cond`, may be null
  Body body, else_body;
};

struct SetNode : Node {
  explicit SetNode(int l) : Node(l) {}
  Flow render(Interpreter& in) const override;
  AssignTarget target;
  ExprPtr value;
};

// {% set name %}...{% endset %}, optionally through filters: the block's output is the value.
struct SetBlockNode : Node {
  explicit SetBlockNode(int l) : Node(l) {}
  Flow render(Interpreter& in) const override;
  AssignTarget target;
  std::vector<std::unique_ptr<FilterExpr>> filters;  // each with a null input
  Body body;
};

struct MacroNode : Node {
  explicit MacroNode(int l) : Node(l) {}
  Flow render(Interpreter& in) const override;
  std::string name;
  std::vector<std::pair<std::string, ExprPtr>> parameters;  // default may be null
  Body body;
};

struct WithNode : Node {
  explicit WithNode(int l) : Node(l) {}
  Flow render(Interpreter& in) const override;
  std::vector<std::pair<std::string, ExprPtr>> assignments;
  Body body;
};

// {% filter f %}...{% endfilter %}; also {% generation %} (Hugging Face's marker of assistant
// text, rendered as its body) with no filters.
struct FilterBlockNode : Node {
  explicit FilterBlockNode(int l) : Node(l) {}
  Flow render(Interpreter& in) const override;
  std::vector<std::unique_ptr<FilterExpr>> filters;
  Body body;
};

struct LoopControlNode : Node {
  LoopControlNode(int l, Flow f) : Node(l), flow(f) {}
  Flow render(Interpreter&) const override { return flow; }
  Flow flow;
};

}  // namespace rvformer::chat::jinja
