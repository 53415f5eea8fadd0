// chat/jinja_render.cpp — evaluation of the syntax tree, and Template. Scoping follows Jinja: a for
// loop's body and a macro call get a fresh scope per iteration or call (assignments inside do not
// leak out, and do not carry over between iterations); `if` bodies share the enclosing scope;
// macros read the variables of the scope they were defined in at call time.
#include <algorithm>

#include <fmt/format.h>

#include "chat/jinja_builtins.h"
#include "chat/jinja_parser.h"
#include "chat/python_text.h"

namespace rvformer::chat::jinja {

class Scope {
 public:
  explicit Scope(std::shared_ptr<Scope> parent) : parent_(std::move(parent)) {}

  const Value* find(std::string_view name) const {
    for (const Scope* s = this; s; s = s->parent_.get()) {
      for (const auto& [key, value] : s->variables_) {
        if (key == name) return &value;
      }
    }
    return nullptr;
  }

  void set(const std::string& name, Value value) {
    for (auto& [key, existing] : variables_) {
      if (key == name) {
        existing = std::move(value);
        return;
      }
    }
    variables_.emplace_back(name, std::move(value));
  }

 private:
  std::vector<std::pair<std::string, Value>> variables_;
  std::shared_ptr<Scope> parent_;
};

class Interpreter {
 public:
  Interpreter(std::string_view source_name, std::shared_ptr<Scope> scope) : source_name_(source_name), scope_(std::move(scope)) {}

  std::string& out() { return *outputs_.back(); }
  const std::shared_ptr<Scope>& scope() const { return scope_; }
  std::string_view source_name() const { return source_name_; }

  Value lookup(const std::string& name) const {
    if (const Value* v = scope_->find(name)) return *v;
    return Value::undefined(fmt::format("'{}' is undefined", name));
  }

  Flow render(const Body& body) {
    for (const NodePtr& node : body) {
      if (const Flow flow = node->render(*this); flow != Flow::normal) return flow;
    }
    return Flow::normal;
  }

  // Renders `body` in `scope` into a string of its own.
  std::string capture(const Body& body, std::shared_ptr<Scope> scope) {
    std::string text;
    const ScopeSwitch with_scope(*this, std::move(scope));
    outputs_.push_back(&text);
    try {
      render(body);
    } catch (...) {
      outputs_.pop_back();
      throw;
    }
    outputs_.pop_back();
    return text;
  }

  std::string render_template(const Body& body) {
    std::string text;
    outputs_.push_back(&text);
    render(body);
    outputs_.clear();
    return text;
  }

  // Makes `scope` current for its lifetime.
  class ScopeSwitch {
   public:
    ScopeSwitch(Interpreter& in, std::shared_ptr<Scope> scope) : in_(in), saved_(std::move(in.scope_)) { in.scope_ = std::move(scope); }
    ~ScopeSwitch() { in_.scope_ = std::move(saved_); }
    ScopeSwitch(const ScopeSwitch&) = delete;
    ScopeSwitch& operator=(const ScopeSwitch&) = delete;

   private:
    Interpreter& in_;
    std::shared_ptr<Scope> saved_;
  };

  // Guards macro recursion, which Python bounds with its recursion limit.
  class CallDepth {
   public:
    explicit CallDepth(Interpreter& in) : in_(in) {
      if (++in.depth_ > 100) {
        --in.depth_;
        raise(ErrorKind::runtime, "maximum recursion depth exceeded in macro calls");
      }
    }
    ~CallDepth() { --in_.depth_; }
    CallDepth(const CallDepth&) = delete;
    CallDepth& operator=(const CallDepth&) = delete;

   private:
    Interpreter& in_;
  };

 private:
  std::string_view source_name_;
  std::shared_ptr<Scope> scope_;
  std::vector<std::string*> outputs_;
  int depth_ = 0;
};

namespace {

// Runs one statement, giving value errors the statement's line.
template <typename F>
Flow guarded(Interpreter& in, int line, F&& body) {
  try {
    return body();
  } catch (const ValueError& e) {
    throw TemplateError(e.kind, in.source_name(), line, e.message);
  }
}

void assign(Interpreter& in, const AssignTarget& target, const Value& value) {
  if (!target.attribute.empty()) {
    const Value holder = in.lookup(target.names.front());
    if (holder.kind() != Value::Kind::object || !holder.as_object()->set_attribute(target.attribute, value)) {
      raise(ErrorKind::runtime, "cannot assign attribute on non-namespace object");
    }
    return;
  }
  if (!target.unpack) {
    in.scope()->set(target.names.front(), value);
    return;
  }
  if (!value.is_undefined() && value.kind() != Value::Kind::sequence && value.kind() != Value::Kind::string &&
      value.kind() != Value::Kind::dict) {
    raise(ErrorKind::type, fmt::format("cannot unpack non-iterable {} object", type_name(value)));
  }
  const std::vector<Value> items = iterate(value);
  if (items.size() != target.names.size()) {
    if (items.size() > target.names.size()) {
      raise(ErrorKind::value, fmt::format("too many values to unpack (expected {})", target.names.size()));
    }
    raise(ErrorKind::value, fmt::format("not enough values to unpack (expected {}, got {})", target.names.size(), items.size()));
  }
  for (std::size_t i = 0; i < items.size(); ++i) in.scope()->set(target.names[i], items[i]);
}

class LoopObject : public Object {
 public:
  LoopObject(std::shared_ptr<const std::vector<Value>> items, std::size_t index) : items_(std::move(items)), index_(index) {}
  std::string_view type_name() const override { return "LoopContext"; }
  std::string repr() const override { return fmt::format("<LoopContext {}/{}>", index_ + 1, items_->size()); }

  std::optional<Value> attribute(std::string_view name) const override {
    const auto n = static_cast<std::int64_t>(items_->size());
    const auto i = static_cast<std::int64_t>(index_);
    if (name == "index") return Value(i + 1);
    if (name == "index0") return Value(i);
    if (name == "revindex") return Value(n - i);
    if (name == "revindex0") return Value(n - i - 1);
    if (name == "first") return Value(i == 0);
    if (name == "last") return Value(i == n - 1);
    if (name == "length") return Value(n);
    if (name == "depth") return Value(1);
    if (name == "depth0") return Value(0);
    if (name == "previtem") return i > 0 ? (*items_)[index_ - 1] : Value::undefined("there is no previous item");
    if (name == "nextitem") return i + 1 < n ? (*items_)[index_ + 1] : Value::undefined("there is no next item");
    if (name == "cycle") {
      const std::size_t index = index_;
      return Value::function("loop.cycle", [index](Interpreter&, Arguments& args) {
        if (args.positional.empty()) raise(ErrorKind::type, "no items for cycling given");
        return args.positional[index % args.positional.size()];
      });
    }
    return std::nullopt;
  }

 private:
  std::shared_ptr<const std::vector<Value>> items_;
  std::size_t index_;
};

Value call_macro(Interpreter& in, const MacroNode& macro, const std::shared_ptr<Scope>& defined_in, Arguments& args) {
  const Interpreter::CallDepth depth(in);
  const auto& params = macro.parameters;
  if (args.positional.size() > params.size()) {
    raise(ErrorKind::type, fmt::format("macro '{}' takes not more than {} argument(s)", macro.name, params.size()));
  }
  std::vector<std::optional<Value>> bound(params.size());
  for (std::size_t i = 0; i < args.positional.size(); ++i) bound[i] = args.positional[i];
  for (const auto& [key, value] : args.keyword) {
    const auto it = std::find_if(params.begin(), params.end(), [&](const auto& p) { return p.first == key; });
    if (it == params.end()) raise(ErrorKind::type, fmt::format("macro '{}' takes no keyword argument '{}'", macro.name, key));
    const auto i = static_cast<std::size_t>(it - params.begin());
    if (bound[i]) raise(ErrorKind::type, fmt::format("macro '{}' got multiple values for argument '{}'", macro.name, key));
    bound[i] = value;
  }
  auto scope = std::make_shared<Scope>(defined_in);
  {
    const Interpreter::ScopeSwitch with_scope(in, scope);
    for (std::size_t i = 0; i < params.size(); ++i) {
      Value v = bound[i] ? *bound[i]
                : params[i].second ? params[i].second->eval(in)
                                   : Value::undefined(fmt::format("parameter '{}' was not provided", params[i].first));
      scope->set(params[i].first, std::move(v));
    }
  }
  return Value(in.capture(macro.body, scope));
}

bool compare(CompareOp op, const Value& a, const Value& b) {
  switch (op) {
    case CompareOp::equal: return equal(a, b);
    case CompareOp::not_equal: return !equal(a, b);
    case CompareOp::less: return less(a, b);
    case CompareOp::less_equal: return less(a, b) || equal(a, b);
    case CompareOp::greater: return less(b, a);
    case CompareOp::greater_equal: return less(b, a) || equal(a, b);
    case CompareOp::in: return contains(b, a);
    case CompareOp::not_in: return !contains(b, a);
  }
  return false;
}

Value apply_filters(Interpreter& in, const std::vector<std::unique_ptr<FilterExpr>>& filters, Value value) {
  for (const auto& filter : filters) value = filter->apply(in, value);
  return value;
}

}  // namespace

Arguments CallArguments::eval(Interpreter& in) const {
  Arguments args;
  for (const ExprPtr& e : positional) args.positional.push_back(e->eval(in));
  for (const auto& [key, e] : keyword) args.keyword.emplace_back(key, e->eval(in));
  return args;
}

Value Literal::eval(Interpreter&) const { return value; }
Value NameRef::eval(Interpreter& in) const { return in.lookup(name); }

Value SequenceExpr::eval(Interpreter& in) const {
  std::vector<Value> values;
  for (const ExprPtr& e : items) values.push_back(e->eval(in));
  return tuple ? Value::tuple(std::move(values)) : Value::list(std::move(values));
}

Value DictExpr::eval(Interpreter& in) const {
  Dict d;
  for (const auto& [key, value] : entries) {
    Value k = key->eval(in);
    require_hashable(k);
    d.set(std::move(k), value->eval(in));
  }
  return Value::dict(std::move(d));
}

Value AttributeExpr::eval(Interpreter& in) const { return get_attribute(object->eval(in), name); }
Value ItemExpr::eval(Interpreter& in) const {
  Value container = object->eval(in);
  return get_item(container, key->eval(in));
}

Value SliceExpr::eval(Interpreter& in) const {
  Value container = object->eval(in);
  auto bound = [&](const ExprPtr& e) { return e ? e->eval(in) : Value(); };
  Value a = bound(start);
  Value b = bound(stop);
  return slice(container, a, b, bound(step));
}

Value CallExpr::eval(Interpreter& in) const {
  const Value target = callee->eval(in);
  Arguments args = arguments.eval(in);
  if (target.kind() == Value::Kind::callable) return target.as_callable().call(in, args);
  require_defined(target);
  raise(ErrorKind::type, fmt::format("'{}' object is not callable", type_name(target)));
}

Value FilterExpr::apply(Interpreter& in, const Value& value) const {
  if (!function) {
    if (is_unsupported_filter(name)) raise(ErrorKind::unsupported, fmt::format("the filter '{}' is not supported by this template engine", name));
    raise(ErrorKind::runtime, fmt::format("No filter named '{}' found.", name));
  }
  Arguments args = arguments.eval(in);
  return function(value, args);
}

Value FilterExpr::eval(Interpreter& in) const { return apply(in, input->eval(in)); }

Value TestExpr::eval(Interpreter& in) const {
  const Value value = input->eval(in);
  if (!function) raise(ErrorKind::runtime, fmt::format("No test named '{}' found.", name));
  Arguments args = arguments.eval(in);
  return Value(function(value, args) != negated);
}

Value UnaryExpr::eval(Interpreter& in) const {
  const Value v = operand->eval(in);
  switch (op) {
    case UnaryOp::negate: return negate(v);
    case UnaryOp::plus: return unary_plus(v);
    case UnaryOp::logical_not: return Value(!truthy(v));
  }
  return v;
}

Value BinaryExpr::eval(Interpreter& in) const {
  const Value a = left->eval(in);
  return arithmetic(op, a, right->eval(in));
}

Value ConcatExpr::eval(Interpreter& in) const {
  const Value a = left->eval(in);
  return Value(to_str(a) + to_str(right->eval(in)));
}

Value LogicalExpr::eval(Interpreter& in) const {
  Value a = left->eval(in);
  if (truthy(a) != is_and) return a;
  return right->eval(in);
}

Value CompareExpr::eval(Interpreter& in) const {
  Value a = first->eval(in);
  for (const auto& [op, expr] : rest) {
    Value b = expr->eval(in);
    if (!compare(op, a, b)) return Value(false);
    a = std::move(b);
  }
  return Value(true);
}

Value ConditionalExpr::eval(Interpreter& in) const {
  if (truthy(condition->eval(in))) return then_value->eval(in);
  if (else_value) return else_value->eval(in);
  return Value::undefined(fmt::format("the inline if-expression on line {} evaluated to false and no else section was defined.", line));
}

Flow TextNode::render(Interpreter& in) const {
  in.out() += text;
  return Flow::normal;
}

Flow PrintNode::render(Interpreter& in) const {
  return guarded(in, line, [&] {
    in.out() += to_str(expr->eval(in));
    return Flow::normal;
  });
}

Flow IfNode::render(Interpreter& in) const {
  const Body* chosen = &else_body;
  guarded(in, line, [&] {
    for (const auto& [condition, body] : branches) {
      if (truthy(condition->eval(in))) {
        chosen = &body;
        break;
      }
    }
    return Flow::normal;
  });
  return in.render(*chosen);
}

Flow ForNode::render(Interpreter& in) const {
  auto items = std::make_shared<std::vector<Value>>();
  guarded(in, line, [&] {
    for (Value& item : iterate(iterable->eval(in))) {
      if (filter) {
        auto scope = std::make_shared<Scope>(in.scope());
        const Interpreter::ScopeSwitch with_scope(in, scope);
        assign(in, target, item);
        if (!truthy(filter->eval(in))) continue;
      }
      items->push_back(std::move(item));
    }
    return Flow::normal;
  });
  if (items->empty()) return in.render(else_body);
  const std::shared_ptr<const std::vector<Value>> shared = items;
  for (std::size_t i = 0; i < shared->size(); ++i) {
    auto scope = std::make_shared<Scope>(in.scope());
    const Interpreter::ScopeSwitch with_scope(in, scope);
    guarded(in, line, [&] {
      assign(in, target, (*shared)[i]);
      scope->set("loop", Value::object(std::make_shared<LoopObject>(shared, i)));
      return Flow::normal;
    });
    if (in.render(body) == Flow::break_loop) break;
  }
  return Flow::normal;
}

Flow SetNode::render(Interpreter& in) const {
  return guarded(in, line, [&] {
    assign(in, target, value->eval(in));
    return Flow::normal;
  });
}

Flow SetBlockNode::render(Interpreter& in) const {
  const Value text(in.capture(body, in.scope()));
  return guarded(in, line, [&] {
    assign(in, target, apply_filters(in, filters, text));
    return Flow::normal;
  });
}

Flow MacroNode::render(Interpreter& in) const {
  const MacroNode* macro = this;
  // Weak: the scope holds the macro, so a strong reference would keep both alive forever.
  std::weak_ptr<Scope> defined_in = in.scope();
  in.scope()->set(name, Value::function(fmt::format("Macro '{}'", name), [macro, defined_in](Interpreter& interpreter, Arguments& args) {
    const std::shared_ptr<Scope> scope = defined_in.lock();
    if (!scope) raise(ErrorKind::runtime, fmt::format("macro '{}' was called after the scope it was defined in ended", macro->name));
    return call_macro(interpreter, *macro, scope, args);
  }));
  return Flow::normal;
}

Flow WithNode::render(Interpreter& in) const {
  auto scope = std::make_shared<Scope>(in.scope());
  guarded(in, line, [&] {
    for (const auto& [name, expr] : assignments) scope->set(name, expr->eval(in));
    return Flow::normal;
  });
  const Interpreter::ScopeSwitch with_scope(in, scope);
  return in.render(body);
}

Flow FilterBlockNode::render(Interpreter& in) const {
  const Value text(in.capture(body, in.scope()));
  return guarded(in, line, [&] {
    in.out() += to_str(apply_filters(in, filters, text));
    return Flow::normal;
  });
}

struct Template::Parsed {
  Body body;
};

Template::Template(std::shared_ptr<const Parsed> parsed, std::string source_name)
    : parsed_(std::move(parsed)), source_name_(std::move(source_name)) {}

Template Template::parse(std::string_view source, std::string source_name, const Options& options) {
  if (!python::valid_utf8(source)) throw TemplateError(ErrorKind::syntax, source_name, 1, "the template is not valid UTF-8");
  auto parsed = std::make_shared<Parsed>();
  parsed->body = jinja::parse(tokenize(source, options, source_name), source_name);
  return Template(std::move(parsed), std::move(source_name));
}

std::string Template::render(const Dict& context) const {
  auto globals = std::make_shared<Scope>(nullptr);
  for (const auto& [key, value] : global_functions().entries) globals->set(key.as_string(), value);
  auto top = std::make_shared<Scope>(globals);
  for (const auto& [key, value] : context.entries) top->set(to_str(key), value);
  Interpreter in(source_name_, top);
  return in.render_template(parsed_->body);
}

}  // namespace rvformer::chat::jinja
