// chat/jinja_value.cpp — see jinja_value.h.
#include "chat/jinja_value.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "chat/jinja_builtins.h"
#include "chat/python_text.h"

namespace rvformer::chat::jinja {

std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::syntax: return "syntax";
    case ErrorKind::assertion: return "assertion";
    case ErrorKind::undefined: return "undefined";
    case ErrorKind::type: return "type";
    case ErrorKind::value: return "value";
    case ErrorKind::zero_division: return "zero_division";
    case ErrorKind::security: return "security";
    case ErrorKind::runtime: return "runtime";
    case ErrorKind::raised: return "raised";
    case ErrorKind::overflow: return "overflow";
    case ErrorKind::unsupported: return "unsupported";
  }
  return "unknown";
}

TemplateError::TemplateError(ErrorKind kind, std::string_view source, int line, std::string message)
    : Error(fmt::format("{} line {}: {}", source, line, message)), kind_(kind), line_(line), message_(std::move(message)) {}

void raise(ErrorKind kind, std::string message) { throw ValueError{kind, std::move(message)}; }

const Value* Dict::find(const Value& key) const {
  for (const auto& [k, v] : entries) {
    if (equal(k, key)) return &v;
  }
  return nullptr;
}

void Dict::set(Value key, Value value) {
  for (auto& [k, v] : entries) {
    if (equal(k, key)) {
      v = std::move(value);
      return;
    }
  }
  entries.emplace_back(std::move(key), std::move(value));
}

std::vector<Value> Iterator::take() {
  if (!items) items = produce();
  if (is_view()) return *items;
  std::vector<Value> rest(items->begin() + static_cast<std::ptrdiff_t>(position), items->end());
  position = items->size();
  return rest;
}

bool Object::set_attribute(std::string_view, Value) { return false; }
std::string Object::repr() const { return fmt::format("<{} object>", type_name()); }

namespace {

std::size_t checked_depth(std::size_t deepest_member) {
  if (deepest_member + 1 > Value::kMaxNesting) {
    raise(ErrorKind::value, fmt::format("values nested more than {} levels deep", Value::kMaxNesting));
  }
  return deepest_member + 1;
}

}  // namespace

Value Value::sequence(std::vector<Value> items, bool tuple) {
  std::size_t deepest = 0;
  for (const Value& v : items) deepest = std::max(deepest, v.nesting());
  const std::size_t depth = checked_depth(deepest);
  return Value(std::make_shared<const Sequence>(Sequence{std::move(items), tuple, depth}));
}

Value Value::dict(Dict d) {
  std::size_t deepest = 0;
  for (const auto& [key, value] : d.entries) deepest = std::max({deepest, key.nesting(), value.nesting()});
  d.depth = checked_depth(deepest);
  return Value(std::make_shared<const Dict>(std::move(d)));
}

std::size_t Value::nesting() const {
  switch (kind()) {
    case Kind::sequence: return as_sequence().depth;
    case Kind::dict: return as_dict().depth;
    case Kind::object: return as_object()->nesting();
    case Kind::iterator: {
      const Iterator& it = as_iterator();
      std::size_t deepest = 0;
      if (it.items) {
        for (const Value& v : *it.items) deepest = std::max(deepest, v.nesting());
      }
      return deepest + 1;
    }
    default: return 0;
  }
}

std::int64_t Value::as_integer() const {
  if (kind() == Kind::boolean) return as_bool() ? 1 : 0;
  return std::get<std::int64_t>(data_);
}

double Value::as_double() const {
  if (kind() == Kind::floating) return std::get<double>(data_);
  return static_cast<double>(as_integer());
}

bool same_object(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::undefined: return false;
    case Value::Kind::none: return true;
    case Value::Kind::boolean: return a.as_bool() == b.as_bool();
    case Value::Kind::integer:  // CPython caches the small integers
      return a.as_integer() == b.as_integer() && a.as_integer() >= -5 && a.as_integer() <= 256;
    case Value::Kind::floating:
    case Value::Kind::string: return false;
    case Value::Kind::sequence: return &a.as_sequence() == &b.as_sequence();
    case Value::Kind::dict: return &a.as_dict() == &b.as_dict();
    case Value::Kind::callable: return &a.as_callable() == &b.as_callable();
    case Value::Kind::object: return a.as_object() == b.as_object();
    case Value::Kind::iterator: return &a.as_iterator() == &b.as_iterator();
  }
  return false;
}

thread_local int NestingGuard::depth_ = 0;

NestingGuard::NestingGuard() {
  if (++depth_ > 512) {
    --depth_;
    raise(ErrorKind::value, "value nested too deeply (or containing itself)");
  }
}
NestingGuard::~NestingGuard() { --depth_; }

std::string type_name(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined: return "Undefined";
    case Value::Kind::none: return "NoneType";
    case Value::Kind::boolean: return "bool";
    case Value::Kind::integer: return "int";
    case Value::Kind::floating: return "float";
    case Value::Kind::string: return "str";
    case Value::Kind::sequence: return v.as_sequence().tuple ? "tuple" : "list";
    case Value::Kind::dict: return "dict";
    case Value::Kind::callable: return "function";
    case Value::Kind::object: return std::string(v.as_object()->type_name());
    case Value::Kind::iterator:
      switch (v.as_iterator().type) {
        case Iterator::Type::generator: return "generator";
        case Iterator::Type::list_reverseiterator: return "list_reverseiterator";
        case Iterator::Type::dict_items: return "dict_items";
        case Iterator::Type::dict_keys: return "dict_keys";
        case Iterator::Type::dict_values: return "dict_values";
      }
  }
  return "object";
}

std::string object_description(const Value& v) {
  if (v.is_none()) return "None";
  return type_name(v) + " object";
}

void require_defined(const Value& v) {
  if (!v.is_undefined()) return;
  const Undefined& u = v.as_undefined();
  raise(u.unsafe ? ErrorKind::security : ErrorKind::undefined, u.hint);
}

void require_hashable(const Value& v) {
  if (v.kind() == Value::Kind::dict || (v.kind() == Value::Kind::sequence && !v.as_sequence().tuple)) {
    raise(ErrorKind::type, fmt::format("unhashable type: '{}'", type_name(v)));
  }
  if (v.kind() == Value::Kind::sequence) {
    for (const Value& item : v.as_sequence().items) require_hashable(item);
  }
}

bool truthy(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined:
    case Value::Kind::none: return false;
    case Value::Kind::boolean: return v.as_bool();
    case Value::Kind::integer: return v.as_integer() != 0;
    case Value::Kind::floating: return v.as_double() != 0.0;
    case Value::Kind::string: return !v.as_string().empty();
    case Value::Kind::sequence: return !v.as_sequence().items.empty();
    case Value::Kind::dict: return !v.as_dict().entries.empty();
    case Value::Kind::iterator: return !v.as_iterator().is_view() || length(v) > 0;
    default: return true;
  }
}

namespace {

// Python compares int and float exactly; long double holds every int64 exactly.
int compare_numbers(const Value& a, const Value& b) {
  if (a.is_integral() && b.is_integral()) {
    return a.as_integer() < b.as_integer() ? -1 : a.as_integer() > b.as_integer() ? 1 : 0;
  }
  const long double x = a.kind() == Value::Kind::floating ? a.as_double() : static_cast<long double>(a.as_integer());
  const long double y = b.kind() == Value::Kind::floating ? b.as_double() : static_cast<long double>(b.as_integer());
  return x < y ? -1 : x > y ? 1 : 0;
}

bool has_nan(const Value& a, const Value& b) {
  return (a.kind() == Value::Kind::floating && std::isnan(a.as_double())) ||
         (b.kind() == Value::Kind::floating && std::isnan(b.as_double()));
}

}  // namespace

bool equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return !has_nan(a, b) && compare_numbers(a, b) == 0;
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::undefined:
    case Value::Kind::none: return true;
    case Value::Kind::string: return a.as_string() == b.as_string();
    case Value::Kind::sequence: {
      const Sequence& x = a.as_sequence();
      const Sequence& y = b.as_sequence();
      if (x.tuple != y.tuple || x.items.size() != y.items.size()) return false;
      for (std::size_t i = 0; i < x.items.size(); ++i) {
        if (!equal(x.items[i], y.items[i])) return false;
      }
      return true;
    }
    case Value::Kind::dict: {
      const Dict& x = a.as_dict();
      const Dict& y = b.as_dict();
      if (x.entries.size() != y.entries.size()) return false;
      for (const auto& [key, value] : x.entries) {
        const Value* other = y.find(key);
        if (!other || !equal(value, *other)) return false;
      }
      return true;
    }
    default: return same_object(a, b);
  }
}

bool less(const Value& a, const Value& b) {
  require_defined(a);
  require_defined(b);
  if (a.is_number() && b.is_number()) return !has_nan(a, b) && compare_numbers(a, b) < 0;
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // UTF-8 keeps code point order
  if (a.kind() == Value::Kind::sequence && b.kind() == Value::Kind::sequence &&
      a.as_sequence().tuple == b.as_sequence().tuple) {
    const auto& x = a.as_sequence().items;
    const auto& y = b.as_sequence().items;
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!equal(x[i], y[i])) return less(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  raise(ErrorKind::type, fmt::format("'<' not supported between instances of '{}' and '{}'", type_name(a), type_name(b)));
}

namespace {

std::string repr_items(const std::vector<Value>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += to_repr(items[i]);
  }
  return out;
}

}  // namespace

std::string to_str(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined: return "";
    case Value::Kind::string: return v.as_string();
    default: return to_repr(v);
  }
}

std::string to_repr(const Value& v) {
  const NestingGuard guard;
  switch (v.kind()) {
    case Value::Kind::undefined: return "Undefined";
    case Value::Kind::none: return "None";
    case Value::Kind::boolean: return v.as_bool() ? "True" : "False";
    case Value::Kind::integer: return std::to_string(v.as_integer());
    case Value::Kind::floating: return python::format_float(v.as_double());
    case Value::Kind::string: return python::quote(v.as_string());
    case Value::Kind::sequence: {
      const Sequence& s = v.as_sequence();
      if (!s.tuple) return fmt::format("[{}]", repr_items(s.items));
      return fmt::format("({}{})", repr_items(s.items), s.items.size() == 1 ? "," : "");
    }
    case Value::Kind::dict: {
      std::string out = "{";
      const auto& entries = v.as_dict().entries;
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i) out += ", ";
        out += to_repr(entries[i].first) + ": " + to_repr(entries[i].second);
      }
      return out + "}";
    }
    case Value::Kind::callable: return fmt::format("<{}>", v.as_callable().name);
    case Value::Kind::object: return v.as_object()->repr();
    case Value::Kind::iterator: {
      Iterator& it = v.as_iterator();
      if (!it.is_view()) return fmt::format("<{} object>", type_name(v));
      return fmt::format("{}([{}])", type_name(v), repr_items(it.take()));
    }
  }
  return "";
}

std::vector<Value> iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined: return {};
    case Value::Kind::sequence: return v.as_sequence().items;
    case Value::Kind::string: {
      std::vector<Value> chars;
      for (char32_t c : python::code_points(v.as_string())) chars.emplace_back(python::utf8(std::u32string(1, c)));
      return chars;
    }
    case Value::Kind::dict: {
      std::vector<Value> keys;
      for (const auto& entry : v.as_dict().entries) keys.push_back(entry.first);
      return keys;
    }
    case Value::Kind::iterator: return v.as_iterator().take();
    default: raise(ErrorKind::type, fmt::format("'{}' object is not iterable", type_name(v)));
  }
}

std::int64_t length(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined: return 0;
    case Value::Kind::string: return static_cast<std::int64_t>(python::code_points(v.as_string()).size());
    case Value::Kind::sequence: return static_cast<std::int64_t>(v.as_sequence().items.size());
    case Value::Kind::dict: return static_cast<std::int64_t>(v.as_dict().entries.size());
    case Value::Kind::iterator:
      if (v.as_iterator().is_view()) return static_cast<std::int64_t>(v.as_iterator().take().size());
      [[fallthrough]];
    default: raise(ErrorKind::type, fmt::format("object of type '{}' has no len()", type_name(v)));
  }
}

namespace {

Value missing_attribute(const Value& container, std::string_view name) {
  return Value::undefined(fmt::format("'{}' has no attribute '{}'", object_description(container), name));
}

}  // namespace

Value get_attribute(const Value& container, std::string_view name) {
  require_defined(container);
  if (std::optional<Value> m = method(container, name)) return *m;
  if (container.kind() == Value::Kind::dict) {
    if (const Value* found = container.as_dict().find(Value(std::string(name)))) return *found;
  }
  if (container.kind() == Value::Kind::object) {
    if (std::optional<Value> found = container.as_object()->attribute(name)) return *found;
  }
  return missing_attribute(container, name);
}

Value get_item(const Value& container, const Value& key) {
  require_defined(container);
  const Value::Kind kind = container.kind();
  if ((kind == Value::Kind::sequence || kind == Value::Kind::string) && key.is_integral()) {
    const bool is_string = kind == Value::Kind::string;
    const std::u32string cps = is_string ? python::code_points(container.as_string()) : std::u32string();
    const auto size = static_cast<std::int64_t>(is_string ? cps.size() : container.as_sequence().items.size());
    std::int64_t index = key.as_integer();
    if (index < 0) index += size;
    if (index < 0 || index >= size) {
      return Value::undefined(fmt::format("'{}' has no element {}", object_description(container), key.as_integer()));
    }
    if (is_string) return Value(python::utf8(std::u32string(1, cps[static_cast<std::size_t>(index)])));
    return container.as_sequence().items[static_cast<std::size_t>(index)];
  }
  if (kind == Value::Kind::dict) {
    if (const Value* found = container.as_dict().find(key)) return *found;
  }
  if (key.is_string()) return get_attribute(container, key.as_string());
  return Value::undefined(fmt::format("'{}' has no element {}", object_description(container), to_repr(key)));
}

namespace {

// CPython's PySlice_AdjustIndices, for the elements a slice selects.
std::vector<std::size_t> slice_indices(std::int64_t size, const Value& start_value, const Value& stop_value,
                                       const Value& step_value) {
  auto bound = [](const Value& v) -> std::optional<std::int64_t> {
    if (v.is_undefined() || v.is_none()) return std::nullopt;
    if (!v.is_integral()) raise(ErrorKind::type, "slice indices must be integers or None or have an __index__ method");
    return v.as_integer();
  };
  const std::int64_t step = bound(step_value).value_or(1);
  if (step == 0) raise(ErrorKind::value, "slice step cannot be zero");
  auto adjust = [&](std::optional<std::int64_t> b, std::int64_t absent) {
    if (!b) return absent;
    std::int64_t i = *b;
    if (i < 0) {
      i += size;
      if (i < 0) i = step < 0 ? -1 : 0;
    } else if (i >= size) {
      i = step < 0 ? size - 1 : size;
    }
    return i;
  };
  const std::int64_t start = adjust(bound(start_value), step < 0 ? size - 1 : 0);
  const std::int64_t stop = adjust(bound(stop_value), step < 0 ? -1 : size);
  std::vector<std::size_t> indices;
  for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) indices.push_back(static_cast<std::size_t>(i));
  return indices;
}

}  // namespace

// Jinja compiles slices to plain Python subscripts (not environment.getitem), so values that
// cannot be sliced raise TypeError instead of giving an undefined value.
Value slice(const Value& container, const Value& start, const Value& stop, const Value& step) {
  require_defined(container);
  if (container.is_string()) {
    const std::u32string cps = python::code_points(container.as_string());
    std::u32string out;
    for (std::size_t i : slice_indices(static_cast<std::int64_t>(cps.size()), start, stop, step)) out.push_back(cps[i]);
    return Value(python::utf8(out));
  }
  if (container.kind() == Value::Kind::sequence) {
    const Sequence& s = container.as_sequence();
    std::vector<Value> out;
    for (std::size_t i : slice_indices(static_cast<std::int64_t>(s.items.size()), start, stop, step)) out.push_back(s.items[i]);
    return s.tuple ? Value::tuple(std::move(out)) : Value::list(std::move(out));
  }
  if (container.kind() == Value::Kind::dict) raise(ErrorKind::type, "unhashable type: 'slice'");
  raise(ErrorKind::type, fmt::format("'{}' object is not subscriptable", type_name(container)));
}

namespace {

[[noreturn]] void overflow() {
  raise(ErrorKind::unsupported, "integer overflow: the result does not fit in 64 bits (Python would use a big integer)");
}

template <typename Op>
std::int64_t checked(Op op, std::int64_t x, std::int64_t y) {
  std::int64_t result = 0;
  if (op(x, y, &result)) overflow();
  return result;
}
std::int64_t checked_add(std::int64_t x, std::int64_t y) { return checked([](auto a, auto b, auto* r) { return __builtin_add_overflow(a, b, r); }, x, y); }
std::int64_t checked_sub(std::int64_t x, std::int64_t y) { return checked([](auto a, auto b, auto* r) { return __builtin_sub_overflow(a, b, r); }, x, y); }
std::int64_t checked_mul(std::int64_t x, std::int64_t y) { return checked([](auto a, auto b, auto* r) { return __builtin_mul_overflow(a, b, r); }, x, y); }

const char* operator_symbol(Arithmetic op) {
  switch (op) {
    case Arithmetic::add: return "+";
    case Arithmetic::subtract: return "-";
    case Arithmetic::multiply: return "*";
    case Arithmetic::divide: return "/";
    case Arithmetic::floor_divide: return "//";
    case Arithmetic::modulo: return "%";
    case Arithmetic::power: return "** or pow()";
  }
  return "?";
}

[[noreturn]] void unsupported_operands(Arithmetic op, const Value& a, const Value& b) {
  raise(ErrorKind::type, fmt::format("unsupported operand type(s) for {}: '{}' and '{}'", operator_symbol(op), type_name(a), type_name(b)));
}

Value integer_arithmetic(Arithmetic op, std::int64_t x, std::int64_t y) {
  switch (op) {
    case Arithmetic::add: return Value(checked_add(x, y));
    case Arithmetic::subtract: return Value(checked_sub(x, y));
    case Arithmetic::multiply: return Value(checked_mul(x, y));
    case Arithmetic::divide:
      if (y == 0) raise(ErrorKind::zero_division, "division by zero");
      return Value(static_cast<double>(x) / static_cast<double>(y));
    case Arithmetic::floor_divide:
    case Arithmetic::modulo: {
      if (y == 0) raise(ErrorKind::zero_division, "integer division or modulo by zero");
      if (x == std::numeric_limits<std::int64_t>::min() && y == -1) overflow();
      std::int64_t q = x / y;
      std::int64_t m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        --q;
        m += y;
      }
      return Value(op == Arithmetic::floor_divide ? q : m);
    }
    case Arithmetic::power: {
      if (y < 0) {
        if (x == 0) raise(ErrorKind::zero_division, "0.0 cannot be raised to a negative power");
        return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
      }
      std::int64_t result = 1;
      for (std::int64_t base = x, e = y; e > 0; e >>= 1) {
        if (e & 1) result = checked_mul(result, base);
        if (e > 1) base = checked_mul(base, base);
      }
      return Value(result);
    }
  }
  return Value::none();
}

// CPython's float_floor_div / float_rem.
Value float_arithmetic(Arithmetic op, double x, double y) {
  switch (op) {
    case Arithmetic::add: return Value(x + y);
    case Arithmetic::subtract: return Value(x - y);
    case Arithmetic::multiply: return Value(x * y);
    case Arithmetic::divide:
      if (y == 0) raise(ErrorKind::zero_division, "float division by zero");
      return Value(x / y);
    case Arithmetic::floor_divide:
    case Arithmetic::modulo: {
      if (y == 0) raise(ErrorKind::zero_division, op == Arithmetic::modulo ? "float modulo" : "float floor division by zero");
      double mod = std::fmod(x, y);
      double div = (x - mod) / y;
      if (mod != 0) {
        if ((y < 0) != (mod < 0)) {
          mod += y;
          div -= 1.0;
        }
      } else {
        mod = std::copysign(0.0, y);
      }
      if (op == Arithmetic::modulo) return Value(mod);
      double floored;
      if (div != 0) {
        floored = std::floor(div);
        if (div - floored > 0.5) floored += 1.0;
      } else {
        floored = std::copysign(0.0, x / y);
      }
      return Value(floored);
    }
    case Arithmetic::power:
      if (x == 0 && y < 0) raise(ErrorKind::zero_division, "0.0 cannot be raised to a negative power");
      if (x < 0 && y != std::floor(y)) raise(ErrorKind::unsupported, "a negative number to a fractional power is complex");
      return Value(std::pow(x, y));
  }
  return Value::none();
}

Value repeat(const Value& sequence, std::int64_t times) {
  if (sequence.is_string()) {
    std::string out;
    for (std::int64_t i = 0; i < times; ++i) out += sequence.as_string();
    return Value(std::move(out));
  }
  std::vector<Value> items;
  for (std::int64_t i = 0; i < times; ++i) {
    const auto& source = sequence.as_sequence().items;
    items.insert(items.end(), source.begin(), source.end());
  }
  return sequence.as_sequence().tuple ? Value::tuple(std::move(items)) : Value::list(std::move(items));
}

bool repeatable(const Value& v) { return v.is_string() || v.kind() == Value::Kind::sequence; }

// `text % args` for text without conversion specifiers, the only case this engine implements.
// Python then accepts no arguments: (), or anything it treats as a mapping (dict, list, Jinja's
// undefined, all of which have __getitem__).
Value format_string(const Value& text, const Value& args) {
  if (text.as_string().find('%') != std::string::npos) {
    raise(ErrorKind::unsupported, "printf-style string formatting with % is not supported by this template engine");
  }
  const bool empty_tuple = args.kind() == Value::Kind::sequence && args.as_sequence().tuple && args.as_sequence().items.empty();
  const bool mapping_like = args.kind() == Value::Kind::dict || args.is_undefined() ||
                            (args.kind() == Value::Kind::sequence && !args.as_sequence().tuple);
  if (!empty_tuple && !mapping_like) raise(ErrorKind::type, "not all arguments converted during string formatting");
  return text;
}

}  // namespace

Value arithmetic(Arithmetic op, const Value& a, const Value& b) {
  if (op == Arithmetic::modulo && a.is_string()) return format_string(a, b);
  require_defined(a);
  require_defined(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral()) return integer_arithmetic(op, a.as_integer(), b.as_integer());
    return float_arithmetic(op, a.as_double(), b.as_double());
  }
  if (op == Arithmetic::add) {
    if (a.is_string() && b.is_string()) return Value(a.as_string() + b.as_string());
    if (a.kind() == Value::Kind::sequence && b.kind() == Value::Kind::sequence && a.as_sequence().tuple == b.as_sequence().tuple) {
      std::vector<Value> items = a.as_sequence().items;
      items.insert(items.end(), b.as_sequence().items.begin(), b.as_sequence().items.end());
      return a.as_sequence().tuple ? Value::tuple(std::move(items)) : Value::list(std::move(items));
    }
    if (a.is_string() || a.kind() == Value::Kind::sequence) {
      raise(ErrorKind::type, fmt::format("can only concatenate {} (not \"{}\") to {}", type_name(a), type_name(b), type_name(a)));
    }
  }
  if (op == Arithmetic::multiply) {
    if (repeatable(a) && b.is_integral()) return repeat(a, b.as_integer());
    if (a.is_integral() && repeatable(b)) return repeat(b, a.as_integer());
    if (repeatable(a) || repeatable(b)) {
      raise(ErrorKind::type, fmt::format("can't multiply sequence by non-int of type '{}'", type_name(repeatable(a) ? b : a)));
    }
  }
  unsupported_operands(op, a, b);
}

Value negate(const Value& v) {
  require_defined(v);
  if (v.kind() == Value::Kind::floating) return Value(-v.as_double());
  if (v.is_integral()) {
    if (v.as_integer() == std::numeric_limits<std::int64_t>::min()) overflow();
    return Value(-v.as_integer());
  }
  raise(ErrorKind::type, fmt::format("bad operand type for unary -: '{}'", type_name(v)));
}

Value unary_plus(const Value& v) {
  require_defined(v);
  if (v.kind() == Value::Kind::floating) return v;
  if (v.is_integral()) return Value(v.as_integer());
  raise(ErrorKind::type, fmt::format("bad operand type for unary +: '{}'", type_name(v)));
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::undefined: return false;
    case Value::Kind::string:
      if (!item.is_string()) {
        raise(ErrorKind::type, fmt::format("'in <string>' requires string as left operand, not {}", type_name(item)));
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::sequence:
      for (const Value& v : container.as_sequence().items) {
        if (equal(v, item)) return true;
      }
      return false;
    case Value::Kind::dict:
      require_hashable(item);
      return container.as_dict().find(item) != nullptr;
    case Value::Kind::iterator: {
      // A generator is consumed up to the item found, as in Python.
      Iterator& it = container.as_iterator();
      if (it.is_view()) {
        const std::vector<Value> items = it.take();
        return std::any_of(items.begin(), items.end(), [&](const Value& v) { return equal(v, item); });
      }
      if (!it.items) it.items = it.produce();
      while (it.position < it.items->size()) {
        if (equal((*it.items)[it.position++], item)) return true;
      }
      return false;
    }
    default: raise(ErrorKind::type, fmt::format("argument of type '{}' is not iterable", type_name(container)));
  }
}

Value from_json(const nlohmann::ordered_json& json) {
  switch (json.type()) {
    case nlohmann::json::value_t::null: return Value::none();
    case nlohmann::json::value_t::boolean: return Value(json.get<bool>());
    case nlohmann::json::value_t::number_integer: return Value(json.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      const auto u = json.get<std::uint64_t>();
      if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return Value(static_cast<std::int64_t>(u));
      return Value(static_cast<double>(u));
    }
    case nlohmann::json::value_t::number_float: return Value(json.get<double>());
    case nlohmann::json::value_t::string: return Value(json.get<std::string>());
    case nlohmann::json::value_t::array: {
      std::vector<Value> items;
      for (const auto& item : json) items.push_back(from_json(item));
      return Value::list(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      Dict d;
      for (const auto& [key, value] : json.items()) d.entries.emplace_back(Value(key), from_json(value));
      return Value::dict(std::move(d));
    }
    default: return Value::none();
  }
}

}  // namespace rvformer::chat::jinja
