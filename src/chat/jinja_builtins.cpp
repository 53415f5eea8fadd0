// chat/jinja_builtins.cpp — see jinja_builtins.h. Each filter and test follows the Jinja 3.1
// function of the same name, each method the CPython method; where the Python one returns an
// iterator (reverse, unique, dict.items, range) this returns a list, which templates use alike.
#include "chat/jinja_builtins.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <initializer_list>
#include <map>

#include <fmt/format.h>

#include "chat/python_text.h"

namespace rvformer::chat::jinja {

namespace {

// Binds call arguments to parameter names as Python does; TypeError for extra ones.
class Params {
 public:
  Params(std::string_view function, const Arguments& args, std::initializer_list<std::string_view> names)
      : values_(names.size()) {
    const std::vector<std::string_view> list(names);
    if (args.positional.size() > list.size()) {
      raise(ErrorKind::type, fmt::format("{}() takes at most {} argument(s) ({} given)", function, list.size(), args.positional.size()));
    }
    for (std::size_t i = 0; i < args.positional.size(); ++i) values_[i] = args.positional[i];
    for (const auto& [key, value] : args.keyword) {
      const auto it = std::find(list.begin(), list.end(), key);
      if (it == list.end()) raise(ErrorKind::type, fmt::format("{}() got an unexpected keyword argument '{}'", function, key));
      const auto i = static_cast<std::size_t>(it - list.begin());
      if (values_[i]) raise(ErrorKind::type, fmt::format("{}() got multiple values for argument '{}'", function, key));
      values_[i] = value;
    }
  }

  bool has(std::size_t i) const { return values_[i].has_value(); }
  Value get(std::size_t i, Value fallback = Value::none()) const { return values_[i] ? *values_[i] : std::move(fallback); }
  std::optional<std::string> string(std::size_t i) const {
    if (!values_[i] || values_[i]->is_none()) return std::nullopt;
    return to_str(*values_[i]);
  }
  bool flag(std::size_t i) const { return values_[i] && truthy(*values_[i]); }

 private:
  std::vector<std::optional<Value>> values_;
};

std::int64_t integer_argument(const Value& v, std::string_view what) {
  if (!v.is_integral()) raise(ErrorKind::type, fmt::format("{} must be an integer, not '{}'", what, type_name(v)));
  return v.as_integer();
}

// Jinja's make_attrgetter: "a.b.0" walks item by item; integers index sequences.
Value attribute_path(const Value& item, const Value& attribute) {
  if (attribute.is_integral()) return get_item(item, attribute);
  Value current = item;
  for (const std::string& part : python::split(to_str(attribute), std::string_view("."), -1, false)) {
    std::int64_t index = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), index);
    const bool numeric = !part.empty() && ec == std::errc() && end == part.data() + part.size();
    current = get_item(current, numeric ? Value(index) : Value(part));
  }
  return current;
}

// The sort and comparison key of Jinja's case-insensitive filters.
Value fold_case(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value(python::lower(v.as_string()));
  return v;
}

Value key_of(const Value& item, const Params& p, std::size_t attribute_index, bool case_sensitive) {
  const Value key = p.has(attribute_index) && !p.get(attribute_index).is_none() ? attribute_path(item, p.get(attribute_index)) : item;
  return fold_case(key, case_sensitive);
}

std::string html_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

bool is_line_break(char32_t c) {
  return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || (c >= 0x1C && c <= 0x1E) || c == 0x85 || c == 0x2028 || c == 0x2029;
}

// str.splitlines().
std::vector<std::string> split_lines(std::string_view text) {
  const std::u32string cps = python::code_points(text);
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t i = 0; i < cps.size(); ++i) {
    if (!is_line_break(cps[i])) continue;
    lines.push_back(python::utf8(std::u32string_view(cps).substr(start, i - start)));
    if (cps[i] == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n') ++i;
    start = i + 1;
  }
  if (start < cps.size()) lines.push_back(python::utf8(std::u32string_view(cps).substr(start)));
  return lines;
}

// Python's int(str) and float(str) for the int and float filters: nothing when Python raises.
std::optional<std::int64_t> parse_python_int(std::string_view text) {
  std::string digits;
  for (char c : python::strip(text, std::nullopt, python::StripSide::both)) {
    if (c != '_') digits.push_back(c);
  }
  if (!digits.empty() && digits[0] == '+') digits.erase(0, 1);
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_python_float(std::string_view text) {
  std::string s = python::lower(python::strip(text, std::nullopt, python::StripSide::both));
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  const bool negative = !s.empty() && s[0] == '-';
  std::string_view body(s);
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) body.remove_prefix(1);
  if (body == "inf" || body == "infinity") return negative ? -HUGE_VAL : HUGE_VAL;
  if (body == "nan") return std::nan("");
  double value = 0;
  const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
  if (body.empty() || ec != std::errc() || end != body.data() + body.size()) return std::nullopt;
  return negative ? -value : value;
}

// ---- filters ----

Value filter_abs(const Value& v, Arguments& args) {
  Params("abs", args, {});
  if (v.kind() == Value::Kind::floating) return Value(std::fabs(v.as_double()));
  if (v.is_integral()) return v.as_integer() < 0 ? negate(v) : Value(v.as_integer());
  raise(ErrorKind::type, fmt::format("bad operand type for abs(): '{}'", type_name(v)));
}

Value filter_capitalize(const Value& v, Arguments& args) {
  Params("capitalize", args, {});
  return Value(python::capitalize(to_str(v)));
}

Value filter_length(const Value& v, Arguments& args) {
  Params("length", args, {});
  return Value(length(v));
}

Value filter_default(const Value& v, Arguments& args) {
  const Params p("default", args, {"default_value", "boolean"});
  if (v.is_undefined() || (p.flag(1) && !truthy(v))) return p.get(0, Value(""));
  return v;
}

Value filter_dictsort(const Value& v, Arguments& args) {
  const Params p("dictsort", args, {"case_sensitive", "by", "reverse"});
  require_defined(v);
  if (v.kind() != Value::Kind::dict) raise(ErrorKind::type, fmt::format("'{}' object has no attribute 'items'", type_name(v)));
  const bool by_value = p.string(1).value_or("key") == "value";
  std::vector<std::pair<Value, Value>> entries = v.as_dict().entries;
  std::stable_sort(entries.begin(), entries.end(), [&](const auto& a, const auto& b) {
    return less(fold_case(by_value ? a.second : a.first, p.flag(0)), fold_case(by_value ? b.second : b.first, p.flag(0)));
  });
  if (p.flag(2)) std::reverse(entries.begin(), entries.end());
  std::vector<Value> items;
  for (auto& [key, value] : entries) items.push_back(Value::tuple({key, value}));
  return Value::list(std::move(items));
}

Value filter_escape(const Value& v, Arguments& args) {
  Params("escape", args, {});
  return Value(html_escape(to_str(v)));
}

Value filter_first(const Value& v, Arguments& args) {
  Params("first", args, {});
  if (v.kind() == Value::Kind::iterator && !v.as_iterator().is_view()) {
    // next(iter(generator)) takes one item and leaves the rest.
    Iterator& it = v.as_iterator();
    if (!it.items) it.items = it.produce();
    if (it.position < it.items->size()) return (*it.items)[it.position++];
    return Value::undefined("No first item, sequence was empty.");
  }
  const std::vector<Value> items = iterate(v);
  if (items.empty()) return Value::undefined("No first item, sequence was empty.");
  return items.front();
}

Value filter_last(const Value& v, Arguments& args) {
  Params("last", args, {});
  if (v.kind() == Value::Kind::iterator && !v.as_iterator().is_view()) {
    raise(ErrorKind::type, fmt::format("'{}' object is not reversible", type_name(v)));
  }
  const std::vector<Value> items = iterate(v);
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

Value filter_float(const Value& v, Arguments& args) {
  const Params p("float", args, {"default"});
  require_defined(v);
  if (v.is_number()) return Value(v.as_double());
  if (v.is_string()) {
    if (std::optional<double> parsed = parse_python_float(v.as_string())) return Value(*parsed);
  }
  return p.get(0, Value(0.0));
}

Value filter_int(const Value& v, Arguments& args) {
  const Params p("int", args, {"default", "base"});
  require_defined(v);
  if (p.has(1) && !(p.get(1).is_integral() && p.get(1).as_integer() == 10)) {
    raise(ErrorKind::unsupported, "the int filter supports base 10 only in this template engine");
  }
  if (v.is_integral()) return Value(v.as_integer());
  if (v.kind() == Value::Kind::floating && std::isfinite(v.as_double()) && std::fabs(v.as_double()) < 9.2e18) {
    return Value(static_cast<std::int64_t>(v.as_double()));
  }
  if (v.is_string()) {
    if (std::optional<std::int64_t> parsed = parse_python_int(v.as_string())) return Value(*parsed);
    std::optional<double> f = parse_python_float(v.as_string());
    if (f && std::isfinite(*f) && std::fabs(*f) < 9.2e18) return Value(static_cast<std::int64_t>(*f));
  }
  return p.get(0, Value(0));
}

std::vector<Value> item_pairs(const Dict& d) {
  std::vector<Value> items;
  for (const auto& [key, value] : d.entries) items.push_back(Value::tuple({key, value}));
  return items;
}

Value filter_items(const Value& v, Arguments& args) {
  Params("items", args, {});
  return Value::iterator(Iterator::Type::generator, [v]() -> std::vector<Value> {
    if (v.is_undefined()) return {};
    if (v.kind() != Value::Kind::dict) raise(ErrorKind::type, "Can only get item pairs from a mapping.");
    return item_pairs(v.as_dict());
  });
}

Value filter_join(const Value& v, Arguments& args) {
  const Params p("join", args, {"d", "attribute"});
  const std::string separator = p.has(0) ? to_str(p.get(0)) : "";
  std::string out;
  bool first = true;
  for (const Value& item : iterate(v)) {
    if (!first) out += separator;
    first = false;
    out += to_str(p.has(1) && !p.get(1).is_none() ? attribute_path(item, p.get(1)) : item);
  }
  return Value(std::move(out));
}

Value filter_list(const Value& v, Arguments& args) {
  Params("list", args, {});
  return Value::list(iterate(v));
}

Value filter_lower(const Value& v, Arguments& args) {
  Params("lower", args, {});
  return Value(python::lower(to_str(v)));
}

Value filter_upper(const Value& v, Arguments& args) {
  Params("upper", args, {});
  return Value(python::upper(to_str(v)));
}

// Jinja's title (not str.title): the first character of each word upper-cased and the rest
// lower-cased, words being separated by runs of '-', whitespace, '(', '{', '[' and '<'.
Value filter_title(const Value& v, Arguments& args) {
  Params("title", args, {});
  const std::u32string cps = python::code_points(to_str(v));
  auto separator = [](char32_t c) { return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || python::is_space(c); };
  std::string out;
  for (std::size_t i = 0; i < cps.size();) {
    std::size_t j = i;
    const bool in_separator = separator(cps[i]);
    while (j < cps.size() && separator(cps[j]) == in_separator) ++j;
    const std::string piece = python::utf8(std::u32string_view(cps).substr(i, j - i));
    const std::size_t first = python::utf8(std::u32string(1, cps[i])).size();
    out += python::upper(piece.substr(0, first)) + python::lower(piece.substr(first));
    i = j;
  }
  return Value(std::move(out));
}

Value aggregate(const Value& v, Arguments& args, std::string_view name, bool want_max) {
  const Params p(name, args, {"case_sensitive", "attribute"});
  const std::vector<Value> items = iterate(v);
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  std::size_t best = 0;
  for (std::size_t i = 1; i < items.size(); ++i) {
    const Value a = key_of(items[i], p, 1, p.flag(0));
    const Value b = key_of(items[best], p, 1, p.flag(0));
    if (want_max ? less(b, a) : less(a, b)) best = i;
  }
  return items[best];
}

Value filter_max(const Value& v, Arguments& args) { return aggregate(v, args, "max", true); }
Value filter_min(const Value& v, Arguments& args) { return aggregate(v, args, "min", false); }

Value filter_replace(const Value& v, Arguments& args) {
  const Params p("replace", args, {"old", "new", "count"});
  if (!p.has(0) || !p.has(1)) raise(ErrorKind::type, "replace() missing required arguments 'old' and 'new'");
  const std::int64_t count = p.has(2) && !p.get(2).is_none() ? integer_argument(p.get(2), "count") : -1;
  return Value(python::replace(to_str(v), to_str(p.get(0)), to_str(p.get(1)), count));
}

Value filter_reverse(const Value& v, Arguments& args) {
  Params("reverse", args, {});
  if (v.is_string()) {
    std::u32string cps = python::code_points(v.as_string());
    std::reverse(cps.begin(), cps.end());
    return Value(python::utf8(cps));
  }
  std::vector<Value> items;
  try {
    items = iterate(v);
  } catch (const ValueError& e) {
    if (e.kind != ErrorKind::type) throw;
    raise(ErrorKind::runtime, "argument must be iterable");
  }
  std::reverse(items.begin(), items.end());
  // reversed() of a list is an iterator; a generator cannot be reversed, so Jinja makes a list.
  if (v.kind() == Value::Kind::iterator && !v.as_iterator().is_view()) return Value::list(std::move(items));
  return Value::iterator(Iterator::Type::list_reverseiterator, [items = std::move(items)] { return items; });
}

// Python's round(x, n): half to even on the exact binary value, as printf's rounding does.
double round_half_even(double x, std::int64_t digits) {
  if (!std::isfinite(x)) return x;
  if (digits > 300) return x;
  const std::string text = fmt::format("{:.{}f}", x, std::max<std::int64_t>(digits, 0));
  double rounded = 0;
  std::from_chars(text.data(), text.data() + text.size(), rounded);
  if (digits >= 0) return rounded;
  const double scale = std::pow(10.0, static_cast<double>(-digits));
  return std::nearbyint(x / scale) * scale;
}

Value filter_round(const Value& v, Arguments& args) {
  const Params p("round", args, {"precision", "method"});
  if (!v.is_number()) raise(ErrorKind::type, fmt::format("type {} doesn't define __round__ method", type_name(v)));
  const std::int64_t precision = p.has(0) ? integer_argument(p.get(0), "precision") : 0;
  const std::string method = p.string(1).value_or("common");
  if (method == "common") {
    if (v.is_integral()) return Value(v.as_integer());
    return Value(round_half_even(v.as_double(), precision));
  }
  if (method != "ceil" && method != "floor") raise(ErrorKind::runtime, "method must be common, ceil or floor");
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double scaled = v.as_double() * scale;
  return Value((method == "ceil" ? std::ceil(scaled) : std::floor(scaled)) / scale);
}

Value filter_safe(const Value& v, Arguments& args) {
  Params("safe", args, {});
  return Value(to_str(v));
}

// select / reject / selectattr / rejectattr: generators, so even a bad test name fails only when
// the result is used.
Value select_items(const Value& v, Arguments& args, std::string_view name, bool by_attribute, bool keep_when) {
  return Value::iterator(Iterator::Type::generator, [v, args, name = std::string(name), by_attribute, keep_when] {
    if (!truthy(v)) return std::vector<Value>();  // Jinja yields nothing for a false input, iterable or not
    std::vector<Value> positional = args.positional;
    if (!args.keyword.empty()) raise(ErrorKind::type, fmt::format("{}() got an unexpected keyword argument '{}'", name, args.keyword[0].first));
    Value attribute;
    if (by_attribute) {
      if (positional.empty()) raise(ErrorKind::type, fmt::format("{}() missing the attribute argument", name));
      attribute = positional.front();
      positional.erase(positional.begin());
    }
    TestFunction test = nullptr;
    if (!positional.empty()) {
      const std::string test_name = to_str(positional.front());
      test = find_test(test_name);
      if (!test) raise(ErrorKind::runtime, fmt::format("No test named '{}'", test_name));
      positional.erase(positional.begin());
    }
    std::vector<Value> kept;
    for (const Value& item : iterate(v)) {
      const Value subject = by_attribute ? attribute_path(item, attribute) : item;
      Arguments test_args{positional, {}};
      const bool passed = test ? test(subject, test_args) : truthy(subject);
      if (passed == keep_when) kept.push_back(item);
    }
    return kept;
  });
}

Value filter_select(const Value& v, Arguments& args) { return select_items(v, args, "select", false, true); }
Value filter_reject(const Value& v, Arguments& args) { return select_items(v, args, "reject", false, false); }
Value filter_selectattr(const Value& v, Arguments& args) { return select_items(v, args, "selectattr", true, true); }
Value filter_rejectattr(const Value& v, Arguments& args) { return select_items(v, args, "rejectattr", true, false); }

std::vector<Value> map_items(const Value& v, const Arguments& args) {
  std::vector<Value> out;
  if (!truthy(v)) return out;  // as Jinja: nothing for a false input, iterable or not
  if (args.positional.empty()) {
    const Params p("map", args, {"attribute", "default"});
    if (!p.has(0)) raise(ErrorKind::type, "map() requires a filter name or attribute=");
    for (const Value& item : iterate(v)) {
      Value mapped = attribute_path(item, p.get(0));
      if (mapped.is_undefined() && p.has(1)) mapped = p.get(1);
      out.push_back(std::move(mapped));
    }
    return out;
  }
  const std::string filter_name = to_str(args.positional.front());
  const FilterFunction filter = find_filter(filter_name);
  if (!filter) raise(ErrorKind::runtime, fmt::format("No filter named '{}'", filter_name));
  for (const Value& item : iterate(v)) {
    Arguments rest{std::vector<Value>(args.positional.begin() + 1, args.positional.end()), args.keyword};
    out.push_back(filter(item, rest));
  }
  return out;
}

Value filter_map(const Value& v, Arguments& args) {
  return Value::iterator(Iterator::Type::generator, [v, args] { return map_items(v, args); });
}

Value filter_sort(const Value& v, Arguments& args) {
  const Params p("sort", args, {"reverse", "case_sensitive", "attribute"});
  std::vector<Value> items = iterate(v);
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    const Value ka = key_of(a, p, 2, p.flag(1));
    const Value kb = key_of(b, p, 2, p.flag(1));
    return p.flag(0) ? less(kb, ka) : less(ka, kb);
  });
  return Value::list(std::move(items));
}

Value filter_string(const Value& v, Arguments& args) {
  Params("string", args, {});
  return Value(to_str(v));
}

Value filter_sum(const Value& v, Arguments& args) {
  const Params p("sum", args, {"attribute", "start"});
  Value total = p.get(1, Value(0));
  for (const Value& item : iterate(v)) {
    total = arithmetic(Arithmetic::add, total, p.has(0) && !p.get(0).is_none() ? attribute_path(item, p.get(0)) : item);
  }
  return total;
}

Value filter_tojson(const Value& v, Arguments& args) {
  // Hugging Face's signature: tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False).
  const Params p("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonFormat format;
  format.ensure_ascii = p.flag(0);
  if (p.has(1) && !p.get(1).is_none()) {
    const Value indent = p.get(1);
    format.indent = indent.is_integral() ? std::string(static_cast<std::size_t>(std::max<std::int64_t>(indent.as_integer(), 0)), ' ')
                                         : to_str(indent);
    format.item_separator = ",";
  }
  if (p.has(2) && !p.get(2).is_none()) {
    const std::vector<Value> separators = iterate(p.get(2));
    if (separators.size() != 2) raise(ErrorKind::value, "separators must be a pair (item_separator, key_separator)");
    format.item_separator = to_str(separators[0]);
    format.key_separator = to_str(separators[1]);
  }
  format.sort_keys = p.flag(3);
  return Value(json_dumps(v, format));
}

Value filter_trim(const Value& v, Arguments& args) {
  const Params p("trim", args, {"chars"});
  const std::optional<std::string> chars = p.string(0);
  return Value(python::strip(to_str(v), chars ? std::optional<std::string_view>(*chars) : std::nullopt, python::StripSide::both));
}

Value filter_unique(const Value& v, Arguments& args) {
  return Value::iterator(Iterator::Type::generator, [v, args] {
    const Params p("unique", args, {"case_sensitive", "attribute"});
    std::vector<Value> seen;
    std::vector<Value> out;
    for (const Value& item : iterate(v)) {
      const Value key = key_of(item, p, 1, p.flag(0));
      require_hashable(key);
      if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equal(s, key); })) {
        seen.push_back(key);
        out.push_back(item);
      }
    }
    return out;
  });
}

Value filter_indent(const Value& v, Arguments& args) {
  const Params p("indent", args, {"width", "first", "blank"});
  require_defined(v);
  const Value width = p.get(0, Value(4));
  const std::string indentation = width.is_integral() ? std::string(static_cast<std::size_t>(std::max<std::int64_t>(width.as_integer(), 0)), ' ')
                                                      : to_str(width);
  const std::vector<std::string> lines = split_lines(to_str(v) + "\n");
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += "\n";
    const bool indent_line = i > 0 && (p.flag(2) || !lines[i].empty());
    out += (indent_line ? indentation : "") + lines[i];
  }
  if (p.flag(1)) out = indentation + out;
  return Value(std::move(out));
}

struct NamedFilter {
  std::string_view name;
  FilterFunction function;
};

constexpr NamedFilter kFilters[] = {
    {"abs", filter_abs},           {"capitalize", filter_capitalize}, {"count", filter_length},
    {"d", filter_default},         {"default", filter_default},       {"dictsort", filter_dictsort},
    {"e", filter_escape},          {"escape", filter_escape},         {"forceescape", filter_escape},
    {"first", filter_first},       {"float", filter_float},           {"indent", filter_indent},
    {"int", filter_int},           {"items", filter_items},           {"join", filter_join},
    {"last", filter_last},         {"length", filter_length},         {"list", filter_list},
    {"lower", filter_lower},       {"map", filter_map},               {"max", filter_max},
    {"min", filter_min},           {"reject", filter_reject},         {"rejectattr", filter_rejectattr},
    {"replace", filter_replace},   {"reverse", filter_reverse},       {"round", filter_round},
    {"safe", filter_safe},         {"select", filter_select},         {"selectattr", filter_selectattr},
    {"sort", filter_sort},         {"string", filter_string},         {"sum", filter_sum},
    {"title", filter_title},       {"tojson", filter_tojson},         {"trim", filter_trim},
    {"unique", filter_unique},     {"upper", filter_upper},
};

constexpr std::string_view kUnsupportedFilters[] = {
    "attr",     "batch",    "center",  "filesizeformat", "format", "groupby",  "pprint",   "random",
    "slice",    "striptags", "truncate", "urlencode",    "urlize", "wordcount", "wordwrap", "xmlattr",
};

// ---- tests ----

Value test_argument(Arguments& args, std::string_view name) {
  const Params p(name, args, {"other"});
  if (!p.has(0)) raise(ErrorKind::type, fmt::format("{}() missing 1 required positional argument", name));
  return p.get(0);
}

bool no_arguments(Arguments& args, std::string_view name) {
  Params(name, args, {});
  return true;
}

bool test_boolean(const Value& v, Arguments& a) { return no_arguments(a, "boolean") && v.kind() == Value::Kind::boolean; }
bool test_callable(const Value& v, Arguments& a) {
  return no_arguments(a, "callable") && (v.kind() == Value::Kind::callable || v.is_undefined());
}
bool test_defined(const Value& v, Arguments& a) { return no_arguments(a, "defined") && !v.is_undefined(); }
bool test_undefined(const Value& v, Arguments& a) { return no_arguments(a, "undefined") && v.is_undefined(); }
bool test_none(const Value& v, Arguments& a) { return no_arguments(a, "none") && v.is_none(); }
bool test_true(const Value& v, Arguments& a) { return no_arguments(a, "true") && v.kind() == Value::Kind::boolean && v.as_bool(); }
bool test_false(const Value& v, Arguments& a) { return no_arguments(a, "false") && v.kind() == Value::Kind::boolean && !v.as_bool(); }
bool test_string(const Value& v, Arguments& a) { return no_arguments(a, "string") && v.is_string(); }
bool test_number(const Value& v, Arguments& a) { return no_arguments(a, "number") && v.is_number(); }
bool test_integer(const Value& v, Arguments& a) { return no_arguments(a, "integer") && v.kind() == Value::Kind::integer; }
bool test_float(const Value& v, Arguments& a) { return no_arguments(a, "float") && v.kind() == Value::Kind::floating; }
bool test_mapping(const Value& v, Arguments& a) { return no_arguments(a, "mapping") && v.kind() == Value::Kind::dict; }
bool test_sequence(const Value& v, Arguments& a) {
  const Value::Kind k = v.kind();
  return no_arguments(a, "sequence") &&
         (k == Value::Kind::string || k == Value::Kind::sequence || k == Value::Kind::dict || k == Value::Kind::undefined);
}
bool test_iterable(const Value& v, Arguments& a) {
  const Value::Kind k = v.kind();
  return no_arguments(a, "iterable") && (k == Value::Kind::string || k == Value::Kind::sequence || k == Value::Kind::dict ||
                                         k == Value::Kind::undefined || k == Value::Kind::iterator);
}
bool test_escaped(const Value&, Arguments& a) { return !no_arguments(a, "escaped"); }
bool test_lower(const Value& v, Arguments& a) {
  return no_arguments(a, "lower") && v.is_string() && python::lower(v.as_string()) == v.as_string() &&
         python::upper(v.as_string()) != v.as_string();
}
bool test_upper(const Value& v, Arguments& a) {
  return no_arguments(a, "upper") && v.is_string() && python::upper(v.as_string()) == v.as_string() &&
         python::lower(v.as_string()) != v.as_string();
}
bool test_even(const Value& v, Arguments& a) {
  no_arguments(a, "even");
  return equal(arithmetic(Arithmetic::modulo, v, Value(2)), Value(0));
}
bool test_odd(const Value& v, Arguments& a) {
  no_arguments(a, "odd");
  return equal(arithmetic(Arithmetic::modulo, v, Value(2)), Value(1));
}
bool test_divisibleby(const Value& v, Arguments& a) {
  const Value n = test_argument(a, "divisibleby");
  return truthy(arithmetic(Arithmetic::modulo, v, n)) == false;
}
bool test_eq(const Value& v, Arguments& a) { return equal(v, test_argument(a, "eq")); }
bool test_ne(const Value& v, Arguments& a) { return !equal(v, test_argument(a, "ne")); }
bool test_lt(const Value& v, Arguments& a) { return less(v, test_argument(a, "lt")); }
bool test_gt(const Value& v, Arguments& a) { return less(test_argument(a, "gt"), v); }
bool test_le(const Value& v, Arguments& a) {
  const Value other = test_argument(a, "le");
  return less(v, other) || equal(v, other);
}
bool test_ge(const Value& v, Arguments& a) {
  const Value other = test_argument(a, "ge");
  return less(other, v) || equal(v, other);
}
bool test_in(const Value& v, Arguments& a) { return contains(test_argument(a, "in"), v); }
bool test_sameas(const Value& v, Arguments& a) { return same_object(v, test_argument(a, "sameas")); }
bool test_filter(const Value& v, Arguments& a) { return no_arguments(a, "filter") && v.is_string() && find_filter(v.as_string()); }
bool test_test(const Value& v, Arguments& a) { return no_arguments(a, "test") && v.is_string() && find_test(v.as_string()); }

struct NamedTest {
  std::string_view name;
  TestFunction function;
};

constexpr NamedTest kTests[] = {
    {"!=", test_ne},          {"<", test_lt},           {"<=", test_le},           {"==", test_eq},
    {">", test_gt},           {">=", test_ge},          {"boolean", test_boolean}, {"callable", test_callable},
    {"defined", test_defined}, {"divisibleby", test_divisibleby}, {"eq", test_eq}, {"equalto", test_eq},
    {"escaped", test_escaped}, {"even", test_even},     {"false", test_false},     {"filter", test_filter},
    {"float", test_float},    {"ge", test_ge},          {"greaterthan", test_gt},  {"gt", test_gt},
    {"in", test_in},          {"integer", test_integer}, {"iterable", test_iterable}, {"le", test_le},
    {"lessthan", test_lt},    {"lower", test_lower},    {"lt", test_lt},           {"mapping", test_mapping},
    {"ne", test_ne},          {"none", test_none},      {"number", test_number},   {"odd", test_odd},
    {"sameas", test_sameas},  {"sequence", test_sequence}, {"string", test_string}, {"test", test_test},
    {"true", test_true},      {"undefined", test_undefined}, {"upper", test_upper},
};

// ---- methods ----

Value bound(const Value& self, std::string name, std::function<Value(const Value&, Arguments&)> body) {
  return Value::function(name, [self, body = std::move(body)](Interpreter&, Arguments& args) { return body(self, args); });
}

std::optional<std::string_view> optional_chars(const Params& p, std::size_t i, std::string& storage) {
  if (!p.has(i) || p.get(i).is_none()) return std::nullopt;
  storage = to_str(p.get(i));
  return std::string_view(storage);
}

bool affix_matches(const Value& self, const Value& affix, bool prefix) {
  const std::string& s = self.as_string();
  auto matches = [&](const Value& candidate) {
    if (!candidate.is_string()) {
      raise(ErrorKind::type, fmt::format("{} first arg must be str or a tuple of str, not {}", prefix ? "startswith" : "endswith", type_name(candidate)));
    }
    const std::string& a = candidate.as_string();
    return a.size() <= s.size() && (prefix ? s.compare(0, a.size(), a) == 0 : s.compare(s.size() - a.size(), a.size(), a) == 0);
  };
  if (affix.kind() == Value::Kind::sequence && affix.as_sequence().tuple) {
    return std::any_of(affix.as_sequence().items.begin(), affix.as_sequence().items.end(), matches);
  }
  return matches(affix);
}

Value string_list(const std::vector<std::string>& parts) {
  std::vector<Value> items(parts.begin(), parts.end());
  return Value::list(std::move(items));
}

Value split_method(const Value& self, Arguments& args, bool from_right) {
  const Params p(from_right ? "rsplit" : "split", args, {"sep", "maxsplit"});
  std::string storage;
  const std::optional<std::string_view> separator = optional_chars(p, 0, storage);
  const std::int64_t maxsplit = p.has(1) ? integer_argument(p.get(1), "maxsplit") : -1;
  return string_list(python::split(self.as_string(), separator, maxsplit, from_right));
}

Value strip_method(const Value& self, Arguments& args, python::StripSide side) {
  const Params p("strip", args, {"chars"});
  std::string storage;
  return Value(python::strip(self.as_string(), optional_chars(p, 0, storage), side));
}

template <typename Predicate>
Value string_predicate(const Value& self, Arguments& args, Predicate predicate) {
  Params("is", args, {});
  const std::u32string cps = python::code_points(self.as_string());
  return Value(!cps.empty() && std::all_of(cps.begin(), cps.end(), predicate));
}

std::optional<Value> string_method(const Value& self, std::string_view name) {
  using Body = std::function<Value(const Value&, Arguments&)>;
  static const std::map<std::string_view, Body> methods = {
      {"startswith", [](const Value& s, Arguments& a) { return Value(affix_matches(s, test_argument(a, "startswith"), true)); }},
      {"endswith", [](const Value& s, Arguments& a) { return Value(affix_matches(s, test_argument(a, "endswith"), false)); }},
      {"split", [](const Value& s, Arguments& a) { return split_method(s, a, false); }},
      {"rsplit", [](const Value& s, Arguments& a) { return split_method(s, a, true); }},
      {"splitlines", [](const Value& s, Arguments& a) {
         Params("splitlines", a, {});
         return string_list(split_lines(s.as_string()));
       }},
      {"strip", [](const Value& s, Arguments& a) { return strip_method(s, a, python::StripSide::both); }},
      {"lstrip", [](const Value& s, Arguments& a) { return strip_method(s, a, python::StripSide::left); }},
      {"rstrip", [](const Value& s, Arguments& a) { return strip_method(s, a, python::StripSide::right); }},
      {"replace", [](const Value& s, Arguments& a) {
         const Params p("replace", a, {"old", "new", "count"});
         if (!p.has(0) || !p.has(1)) raise(ErrorKind::type, "replace expected at least 2 arguments");
         if (!p.get(0).is_string() || !p.get(1).is_string()) raise(ErrorKind::type, "replace() arguments must be str");
         const std::int64_t count = p.has(2) ? integer_argument(p.get(2), "count") : -1;
         return Value(python::replace(s.as_string(), p.get(0).as_string(), p.get(1).as_string(), count));
       }},
      {"upper", [](const Value& s, Arguments& a) { Params("upper", a, {}); return Value(python::upper(s.as_string())); }},
      {"lower", [](const Value& s, Arguments& a) { Params("lower", a, {}); return Value(python::lower(s.as_string())); }},
      {"title", [](const Value& s, Arguments& a) { Params("title", a, {}); return Value(python::title(s.as_string())); }},
      {"capitalize", [](const Value& s, Arguments& a) { Params("capitalize", a, {}); return Value(python::capitalize(s.as_string())); }},
      {"find", [](const Value& s, Arguments& a) { return Value(python::find(s.as_string(), to_str(test_argument(a, "find")))); }},
      {"count", [](const Value& s, Arguments& a) { return Value(python::count(s.as_string(), to_str(test_argument(a, "count")))); }},
      {"join", [](const Value& s, Arguments& a) {
         std::string out;
         bool first = true;
         for (const Value& item : iterate(test_argument(a, "join"))) {
           if (!item.is_string()) raise(ErrorKind::type, fmt::format("sequence item: expected str instance, {} found", type_name(item)));
           if (!first) out += s.as_string();
           first = false;
           out += item.as_string();
         }
         return Value(std::move(out));
       }},
      {"removeprefix", [](const Value& s, Arguments& a) {
         const std::string prefix = to_str(test_argument(a, "removeprefix"));
         return Value(s.as_string().rfind(prefix, 0) == 0 ? s.as_string().substr(prefix.size()) : s.as_string());
       }},
      {"removesuffix", [](const Value& s, Arguments& a) {
         const std::string suffix = to_str(test_argument(a, "removesuffix"));
         const std::string& t = s.as_string();
         const bool ends = !suffix.empty() && t.size() >= suffix.size() && t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0;
         return Value(ends ? t.substr(0, t.size() - suffix.size()) : t);
       }},
      {"isspace", [](const Value& s, Arguments& a) { return string_predicate(s, a, python::is_space); }},
      {"isdigit", [](const Value& s, Arguments& a) { return string_predicate(s, a, [](char32_t c) { return c >= '0' && c <= '9'; }); }},
      {"isalpha", [](const Value& s, Arguments& a) {
         return string_predicate(s, a, [](char32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); });
       }},
      {"isalnum", [](const Value& s, Arguments& a) {
         return string_predicate(s, a, [](char32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); });
       }},
  };
  static constexpr std::string_view unsupported[] = {
      "casefold", "center", "encode", "expandtabs", "format", "format_map", "index", "isdecimal", "isidentifier",
      "islower", "isnumeric", "isprintable", "istitle", "isupper", "ljust", "partition", "rfind", "rindex",
      "rjust", "rpartition", "swapcase", "translate", "zfill"};
  if (auto it = methods.find(name); it != methods.end()) return bound(self, fmt::format("str.{}", name), it->second);
  if (std::find(std::begin(unsupported), std::end(unsupported), name) != std::end(unsupported)) {
    return bound(self, fmt::format("str.{}", name), [name = std::string(name)](const Value&, Arguments&) -> Value {
      raise(ErrorKind::unsupported, fmt::format("str.{}() is not supported by this template engine", name));
    });
  }
  return std::nullopt;
}

std::optional<Value> dict_method(const Value& self, std::string_view name) {
  auto view = [&](Iterator::Type type, std::string method_name, std::function<std::vector<Value>(const Dict&)> items) {
    return bound(self, "dict." + method_name, [type, method_name, items = std::move(items)](const Value& d, Arguments& a) {
      Params(method_name, a, {});
      return Value::iterator(type, [d, items] { return items(d.as_dict()); });
    });
  };
  if (name == "items") return view(Iterator::Type::dict_items, "items", item_pairs);
  if (name == "keys") {
    return view(Iterator::Type::dict_keys, "keys", [](const Dict& d) {
      std::vector<Value> keys;
      for (const auto& entry : d.entries) keys.push_back(entry.first);
      return keys;
    });
  }
  if (name == "values") {
    return view(Iterator::Type::dict_values, "values", [](const Dict& d) {
      std::vector<Value> values;
      for (const auto& entry : d.entries) values.push_back(entry.second);
      return values;
    });
  }
  if (name == "get") {
    return bound(self, "dict.get", [](const Value& d, Arguments& a) {
      const Params p("get", a, {"key", "default"});
      const Value* found = d.as_dict().find(p.get(0));
      return found ? *found : p.get(1);
    });
  }
  for (std::string_view mutator : {"clear", "pop", "popitem", "setdefault", "update"}) {
    if (name == mutator) return Value::undefined(fmt::format("access to attribute '{}' of 'dict' object is unsafe.", name), true);
  }
  return std::nullopt;
}

std::optional<Value> list_method(const Value& self, std::string_view name) {
  if (name == "count") {
    return bound(self, "list.count", [](const Value& l, Arguments& a) {
      const Value item = test_argument(a, "count");
      const auto& items = l.as_sequence().items;
      return Value(static_cast<std::int64_t>(std::count_if(items.begin(), items.end(), [&](const Value& v) { return equal(v, item); })));
    });
  }
  if (name == "index") {
    return bound(self, "list.index", [](const Value& l, Arguments& a) {
      const Value item = test_argument(a, "index");
      const auto& items = l.as_sequence().items;
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (equal(items[i], item)) return Value(static_cast<std::int64_t>(i));
      }
      raise(ErrorKind::value, fmt::format("{} is not in list", to_repr(item)));
    });
  }
  if (self.as_sequence().tuple) return std::nullopt;
  for (std::string_view mutator : {"append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort"}) {
    if (name == mutator) return Value::undefined(fmt::format("access to attribute '{}' of 'list' object is unsafe.", name), true);
  }
  return std::nullopt;
}

// ---- globals ----

class NamespaceObject : public Object {
 public:
  explicit NamespaceObject(Dict attributes) : attributes_(Value::dict(std::move(attributes)).as_dict()), depth_(attributes_.depth) {}
  std::string_view type_name() const override { return "Namespace"; }
  std::optional<Value> attribute(std::string_view name) const override {
    if (const Value* v = attributes_.find(Value(std::string(name)))) return *v;
    return std::nullopt;
  }
  bool set_attribute(std::string_view name, Value value) override {
    if (value.nesting() + 1 > Value::kMaxNesting) {
      raise(ErrorKind::value, fmt::format("values nested more than {} levels deep", Value::kMaxNesting));
    }
    depth_ = std::max(depth_, value.nesting() + 1);
    attributes_.set(Value(std::string(name)), std::move(value));
    return true;
  }
  std::string repr() const override { return "<Namespace " + to_repr(Value::dict(attributes_)) + ">"; }
  // Kept, not recomputed: namespaces can hold each other in a cycle.
  std::size_t nesting() const override { return depth_; }

 private:
  Dict attributes_;
  std::size_t depth_;
};

Dict keyword_dict(const Arguments& args, std::size_t allowed_positional, std::string_view function) {
  if (args.positional.size() > allowed_positional) raise(ErrorKind::type, fmt::format("{}() takes no positional arguments", function));
  Dict d;
  if (!args.positional.empty()) {
    const Value& initial = args.positional.front();
    if (initial.kind() != Value::Kind::dict) raise(ErrorKind::type, fmt::format("{}() argument must be a mapping", function));
    d = initial.as_dict();
  }
  for (const auto& [key, value] : args.keyword) d.set(Value(key), value);
  return d;
}

Value global_range(Interpreter&, Arguments& args) {
  if (!args.keyword.empty()) raise(ErrorKind::type, "range() takes no keyword arguments");
  std::vector<std::int64_t> bounds;
  for (const Value& v : args.positional) bounds.push_back(integer_argument(v, "range() argument"));
  if (bounds.empty() || bounds.size() > 3) raise(ErrorKind::type, "range expected 1 to 3 arguments");
  const std::int64_t start = bounds.size() == 1 ? 0 : bounds[0];
  const std::int64_t stop = bounds.size() == 1 ? bounds[0] : bounds[1];
  const std::int64_t step = bounds.size() == 3 ? bounds[2] : 1;
  if (step == 0) raise(ErrorKind::value, "range() arg 3 must not be zero");
  const long double count = step > 0 ? std::ceil(static_cast<long double>(stop - start) / step) : std::ceil(static_cast<long double>(start - stop) / -step);
  if (count > 100000) raise(ErrorKind::overflow, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  std::vector<Value> items;
  for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) items.emplace_back(i);
  return Value::list(std::move(items));
}

Value global_strftime_now(Interpreter&, Arguments& args) {
  const Params p("strftime_now", args, {"format"});
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[512];
  const std::size_t n = std::strftime(buffer, sizeof buffer, to_str(p.get(0)).c_str(), &local);
  return Value(std::string(buffer, n));
}

// ---- json.dumps ----

std::string json_key(const Value& key) {
  switch (key.kind()) {
    case Value::Kind::string: return key.as_string();
    case Value::Kind::boolean: return key.as_bool() ? "true" : "false";
    case Value::Kind::none: return "null";
    case Value::Kind::integer: return std::to_string(key.as_integer());
    case Value::Kind::floating: return python::format_float(key.as_double());
    default: raise(ErrorKind::type, fmt::format("keys must be str, int, float, bool or None, not {}", type_name(key)));
  }
}

std::string json_string(std::string_view text, bool ensure_ascii) { return python::json_quote(text, ensure_ascii); }

void dump_json(const Value& v, const JsonFormat& format, int level, std::string& out) {
  const NestingGuard guard;
  auto newline = [&](int depth) {
    if (format.indent) {
      out += "\n";
      for (int i = 0; i < depth; ++i) out += *format.indent;
    }
  };
  switch (v.kind()) {
    case Value::Kind::none: out += "null"; return;
    case Value::Kind::boolean: out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::integer: out += std::to_string(v.as_integer()); return;
    case Value::Kind::floating: {
      const double d = v.as_double();
      out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : python::format_float(d);
      return;
    }
    case Value::Kind::string: out += json_string(v.as_string(), format.ensure_ascii); return;
    case Value::Kind::sequence: {
      const auto& items = v.as_sequence().items;
      if (items.empty()) {
        out += "[]";
        return;
      }
      out += "[";
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += format.item_separator;
        newline(level + 1);
        dump_json(items[i], format, level + 1, out);
      }
      newline(level);
      out += "]";
      return;
    }
    case Value::Kind::dict: {
      std::vector<std::pair<Value, Value>> entries = v.as_dict().entries;
      if (entries.empty()) {
        out += "{}";
        return;
      }
      if (format.sort_keys) {
        std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return less(a.first, b.first); });
      }
      out += "{";
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i) out += format.item_separator;
        newline(level + 1);
        out += json_string(json_key(entries[i].first), format.ensure_ascii);
        out += format.key_separator;
        dump_json(entries[i].second, format, level + 1, out);
      }
      newline(level);
      out += "}";
      return;
    }
    default: raise(ErrorKind::type, fmt::format("Object of type {} is not JSON serializable", type_name(v)));
  }
}

}  // namespace

FilterFunction find_filter(std::string_view name) {
  for (const NamedFilter& f : kFilters) {
    if (f.name == name) return f.function;
  }
  return nullptr;
}

TestFunction find_test(std::string_view name) {
  for (const NamedTest& t : kTests) {
    if (t.name == name) return t.function;
  }
  return nullptr;
}

bool is_unsupported_filter(std::string_view name) {
  return std::find(std::begin(kUnsupportedFilters), std::end(kUnsupportedFilters), name) != std::end(kUnsupportedFilters);
}

bool is_unsupported_test(std::string_view) { return false; }

std::optional<Value> method(const Value& self, std::string_view name) {
  switch (self.kind()) {
    case Value::Kind::string: return string_method(self, name);
    case Value::Kind::dict: return dict_method(self, name);
    case Value::Kind::sequence: return list_method(self, name);
    default: return std::nullopt;
  }
}

Dict global_functions() {
  Dict globals;
  globals.set(Value("range"), Value::function("range", global_range));
  globals.set(Value("namespace"), Value::function("namespace", [](Interpreter&, Arguments& args) {
                return Value::object(std::make_shared<NamespaceObject>(keyword_dict(args, 1, "namespace")));
              }));
  globals.set(Value("dict"), Value::function("dict", [](Interpreter&, Arguments& args) { return Value::dict(keyword_dict(args, 1, "dict")); }));
  globals.set(Value("raise_exception"), Value::function("raise_exception", [](Interpreter&, Arguments& args) -> Value {
                const Params p("raise_exception", args, {"message"});
                raise(ErrorKind::raised, to_str(p.get(0, Value(""))));
              }));
  globals.set(Value("strftime_now"), Value::function("strftime_now", global_strftime_now));
  return globals;
}

std::string json_dumps(const Value& v, const JsonFormat& format) {
  std::string out;
  dump_json(v, format, 0, out);
  return out;
}

}  // namespace rvformer::chat::jinja
