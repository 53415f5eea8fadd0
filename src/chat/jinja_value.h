// chat/jinja_value.h — the values a chat template computes with, and the Python semantics Jinja
// gives them: truthiness, equality and ordering, str() and repr(), iteration, attribute and item
// access. Hugging Face renders templates with Python's Jinja, so every operation here follows what
// CPython does for the corresponding Python object (docs/chat.md lists the known differences).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/error.h"

namespace rvformer::chat::jinja {

// What went wrong, named after the Python exception Jinja raises for the same mistake, so tests can
// compare our errors with Jinja's.
enum class ErrorKind {
  syntax,          // TemplateSyntaxError
  assertion,       // TemplateAssertionError: an unknown filter or test
  undefined,       // UndefinedError
  type,            // TypeError
  value,           // ValueError
  zero_division,   // ZeroDivisionError
  security,        // SecurityError: the sandbox forbids changing a list or dict
  runtime,         // TemplateRuntimeError
  raised,          // the template called raise_exception(message)
  overflow,        // OverflowError
  unsupported,     // valid Jinja that this engine does not implement (docs/chat.md)
};

std::string_view error_kind_name(ErrorKind kind);

// A template failure. what() is one line: "SOURCE line N: message" (SOURCE names the template,
// e.g. its file); message() is the bare text (for raise_exception, the template's own words).
class TemplateError : public Error {
 public:
  TemplateError(ErrorKind kind, std::string_view source, int line, std::string message);
  ErrorKind kind() const { return kind_; }
  int line() const { return line_; }
  const std::string& message() const { return message_; }

 private:
  ErrorKind kind_;
  int line_;
  std::string message_;
};

// Thrown by value operations, which do not know the template line; the renderer adds it.
struct ValueError {
  ErrorKind kind;
  std::string message;
};
[[noreturn]] void raise(ErrorKind kind, std::string message);

class Value;
class Interpreter;

struct Undefined {
  // Jinja's text for using it: "'x' is undefined" or "'dict object' has no attribute 'y'".
  std::string hint;
  bool unsafe = false;  // a sandbox-blocked attribute: calling it is a SecurityError
};

struct Sequence {
  std::vector<Value> items;
  bool tuple = false;
  std::size_t depth = 1;  // of nested containers, set by Value::list and Value::tuple
};

// A Python dict: insertion-ordered, keys compared with Python equality.
struct Dict {
  std::vector<std::pair<Value, Value>> entries;
  std::size_t depth = 1;  // of nested containers, set by Value::dict
  const Value* find(const Value& key) const;
  void set(Value key, Value value);
};

struct Arguments {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

// Functions, macros and bound methods.
struct Callable {
  std::string name;  // for messages: "macro 'm'", "range", "str.split"
  std::function<Value(Interpreter&, Arguments&)> call;
};

// What Jinja's filters and dict methods return instead of lists: generators (map, select,
// reject, selectattr, rejectattr, unique, items), reverse iterators, and dict views. Generators are
// computed on first use, can be consumed once, are always true and have no length; views have a
// length and can be iterated again.
struct Iterator {
  enum class Type { generator, list_reverseiterator, dict_items, dict_keys, dict_values };
  Type type;
  std::function<std::vector<Value>()> produce;  // run once, on first iteration
  std::optional<std::vector<Value>> items;
  std::size_t position = 0;

  bool is_view() const { return type == Type::dict_items || type == Type::dict_keys || type == Type::dict_values; }
  // The items not consumed yet; a generator is used up by this.
  std::vector<Value> take();
};

// Objects with attributes: namespace(), the loop variable.
class Object {
 public:
  virtual ~Object() = default;
  virtual std::string_view type_name() const = 0;
  virtual std::optional<Value> attribute(std::string_view name) const = 0;
  // Only namespaces accept `{% set obj.name = value %}`.
  virtual bool set_attribute(std::string_view name, Value value);
  virtual std::string repr() const;
  virtual std::size_t nesting() const { return 1; }  // as Value::nesting
};

class Value {
 public:
  enum class Kind { undefined, none, boolean, integer, floating, string, sequence, dict, callable, object, iterator };

  Value() : data_(Undefined{}) {}
  static Value undefined(std::string hint, bool unsafe = false) { return Value(Undefined{std::move(hint), unsafe}); }
  static Value none() { return Value(nullptr); }
  Value(bool b) : data_(b) {}
  Value(std::int64_t i) : data_(i) {}
  Value(int i) : data_(static_cast<std::int64_t>(i)) {}
  Value(double d) : data_(d) {}
  Value(std::string s) : data_(std::move(s)) {}
  Value(const char* s) : data_(std::string(s)) {}
  // Containers nested deeper than kMaxNesting raise ValueError: every operation on values
  // recurses, and so does freeing them.
  static constexpr std::size_t kMaxNesting = 400;
  static Value list(std::vector<Value> items) { return sequence(std::move(items), false); }
  static Value tuple(std::vector<Value> items) { return sequence(std::move(items), true); }
  static Value dict(Dict d);
  static Value function(std::string name, std::function<Value(Interpreter&, Arguments&)> call) {
    return Value(std::make_shared<const Callable>(Callable{std::move(name), std::move(call)}));
  }
  static Value object(std::shared_ptr<Object> o) { return Value(std::move(o)); }
  static Value iterator(Iterator::Type type, std::function<std::vector<Value>()> produce) {
    return Value(std::make_shared<Iterator>(Iterator{type, std::move(produce), std::nullopt, 0}));
  }

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  // 0 for scalars, 1 + the deepest member for containers.
  std::size_t nesting() const;
  bool is_undefined() const { return kind() == Kind::undefined; }
  bool is_none() const { return kind() == Kind::none; }
  bool is_string() const { return kind() == Kind::string; }
  bool is_number() const { return kind() == Kind::boolean || kind() == Kind::integer || kind() == Kind::floating; }
  bool is_integral() const { return kind() == Kind::boolean || kind() == Kind::integer; }

  const Undefined& as_undefined() const { return std::get<Undefined>(data_); }
  bool as_bool() const { return std::get<bool>(data_); }
  std::int64_t as_integer() const;  // bool or integer
  double as_double() const;         // any number
  const std::string& as_string() const { return std::get<std::string>(data_); }
  const Sequence& as_sequence() const { return *std::get<std::shared_ptr<const Sequence>>(data_); }
  const Dict& as_dict() const { return *std::get<std::shared_ptr<const Dict>>(data_); }
  const Callable& as_callable() const { return *std::get<std::shared_ptr<const Callable>>(data_); }
  const std::shared_ptr<Object>& as_object() const { return std::get<std::shared_ptr<Object>>(data_); }
  Iterator& as_iterator() const { return *std::get<std::shared_ptr<Iterator>>(data_); }

  // Python `a is b` for the `sameas` test: singletons and small integers by value, containers by
  // identity.
  friend bool same_object(const Value& a, const Value& b);

 private:
  using Data = std::variant<Undefined, std::nullptr_t, bool, std::int64_t, double, std::string,
                            std::shared_ptr<const Sequence>, std::shared_ptr<const Dict>,
                            std::shared_ptr<const Callable>, std::shared_ptr<Object>, std::shared_ptr<Iterator>>;
  Value(Undefined u) : data_(std::move(u)) {}
  Value(std::nullptr_t) : data_(nullptr) {}
  Value(std::shared_ptr<const Sequence> s) : data_(std::move(s)) {}
  Value(std::shared_ptr<const Dict> d) : data_(std::move(d)) {}
  Value(std::shared_ptr<const Callable> c) : data_(std::move(c)) {}
  Value(std::shared_ptr<Object> o) : data_(std::move(o)) {}
  Value(std::shared_ptr<Iterator> i) : data_(std::move(i)) {}
  static Value sequence(std::vector<Value> items, bool tuple);

  Data data_;
};

// Bounds the recursion of printing and serialising values: a namespace can contain itself.
class NestingGuard {
 public:
  NestingGuard();  // ValueError beyond 512 levels
  ~NestingGuard();
  NestingGuard(const NestingGuard&) = delete;
  NestingGuard& operator=(const NestingGuard&) = delete;

 private:
  static thread_local int depth_;
};

// Python's type(x).__name__ ("int", "str", "list", "dict", "NoneType", "Undefined", ...).
std::string type_name(const Value& v);
// Jinja's object_type_repr, used in "has no attribute" messages: "'dict object'", "None".
std::string object_description(const Value& v);

// Raises UndefinedError when `v` is undefined (for operations Jinja's Undefined refuses).
void require_defined(const Value& v);

// TypeError for values Python cannot hash (lists, dicts, tuples holding them): dict keys and
// set members must be hashable.
void require_hashable(const Value& v);

bool truthy(const Value& v);
bool equal(const Value& a, const Value& b);
// Python `a < b`; TypeError for values that have no order.
bool less(const Value& a, const Value& b);

std::string to_str(const Value& v);   // Python str(); "" for undefined (Jinja prints nothing)
std::string to_repr(const Value& v);  // Python repr()

// The items a for loop or a filter sees: list and tuple items, a string's characters, a dict's
// keys; nothing for undefined; TypeError otherwise.
std::vector<Value> iterate(const Value& v);
// Python len(); TypeError for values without one.
std::int64_t length(const Value& v);

// Jinja's environment.getattr (x.name) and getitem (x[key]): a missing member is an undefined
// value; only an undefined container raises.
Value get_attribute(const Value& container, std::string_view name);
Value get_item(const Value& container, const Value& key);
// Python's arithmetic operators on numbers, strings and sequences; `+x` and `-x`.
enum class Arithmetic { add, subtract, multiply, divide, floor_divide, modulo, power };
Value arithmetic(Arithmetic op, const Value& a, const Value& b);
Value negate(const Value& v);
Value unary_plus(const Value& v);
// Python `item in container`.
bool contains(const Value& container, const Value& item);

// Python slicing of lists, tuples and strings, with absent bounds given as undefined.
Value slice(const Value& container, const Value& start, const Value& stop, const Value& step);

// JSON values as the template sees them after json.loads: objects keep their key order.
Value from_json(const nlohmann::ordered_json& json);

}  // namespace rvformer::chat::jinja
