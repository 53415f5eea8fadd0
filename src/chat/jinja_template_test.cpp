// chat/jinja_template_test.cpp — the template engine against Python's Jinja2 on a table of
// templates covering what chat templates use, plus direct checks of our own error reporting.
#include <gtest/gtest.h>

#include "chat/jinja_oracle_testing.h"

namespace rvformer::chat {
namespace {

using testing::OracleCase;

OracleCase make(std::string name, std::string tpl, std::string context = "{}") {
  return OracleCase{std::move(name), std::move(tpl), nlohmann::ordered_json::parse(context)};
}

std::vector<OracleCase> table() {
  return {
      // whitespace control, trim_blocks and lstrip_blocks
      make("plain text", "Hello, world"),
      make("trailing newline dropped", "a\n"),
      make("two trailing newlines", "a\n\n"),
      make("crlf normalised", "a\r\nb\rc\r\n"),
      make("block line removed", "a\n  {% if true %}\n  b\n  {% endif %}\nc"),
      make("indented block, trailing text", "x  {% if true %}y{% endif %}  z\n"),
      make("minus left", "a   \n  {%- if true %}b{% endif %}"),
      make("minus right", "{% if true -%}   \n\n  b{% endif %}"),
      make("plus keeps lstrip", "a\n   {%+ if true %}b{% endif %}"),
      make("plus keeps trim", "{% if true +%}\nb{% endif %}"),
      make("variable not lstripped", "a\n   {{ 'b' }}\n  c"),
      make("variable minus", "a   {{- 'b' -}}   c"),
      make("comment lstrip and trim", "a\n  {# note #}\nb {# inline #}\nc"),
      make("comment minus", "a  {#- x -#}  b"),
      make("comment with dash before end", "a {# x -#}   \n b"),
      make("raw block", "{% raw %}{{ not parsed }} {% if %}{% endraw %}"),
      make("raw block trimmed", "  {%- raw -%}  x  {%- endraw -%}  y"),
      make("newline after print kept", "{{ 1 }}\n{{ 2 }}\n"),
      make("tabs before block", "\t\t{% if true %}x{% endif %}"),
      make("unicode space before block", "a\n\u3000{% if true %}x{% endif %}"),
      make("block after block on one line", "{% if true %}{% if true %}\nx{% endif %}{% endif %}"),
      // literals and printing
      make("literals", "{{ 1 }} {{ -2 }} {{ 1.5 }} {{ 1e3 }} {{ 0x1F }} {{ 1_000 }} {{ true }} {{ none }} {{ 'a' 'b' }}"),
      make("string escapes", R"({{ 'a\nb\t\u00e9\x41\101\q' }}|{{ "it's" }}|{{ 'say "hi"' }})"),
      make("print containers", "{{ [1, 'a', none, true, 1.5] }} {{ {'k': 'v', 'n': [1]} }} {{ (1,) }} {{ () }} {{ (1, 2) }}"),
      make("print tuple expression", "{{ 1, 2 }}"),
      make("repr quoting", R"({{ ["it's", 'a"b', 'both \' "', 'tab\t', 'nl\n', 'bs\\'] }})"),
      make("floats", "{{ [0.1, 1e16, 1.5e-7, 100.0, -0.0, 2.5, 1e22, 123456.789, 0.0001, 0.00001] }}"),
      make("undefined prints nothing", "[{{ nothing }}][{{ x.missing }}][{{ x.y.z if false }}]", R"({"x": {}})"),
      make("unicode", "{{ s }}|{{ s|length }}|{{ s[1] }}|{{ s[::-1] }}", R"({"s": "añ日😀"})"),
      // operators
      make("arithmetic", "{{ 7 + 2 }} {{ 7 - 9 }} {{ 7 * 3 }} {{ 7 / 2 }} {{ 4 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 2 ** 10 }} {{ 2 ** -1 }}"),
      make("float arithmetic", "{{ 7.5 // 2 }} {{ -7.5 % 2 }} {{ 0.1 + 0.2 }} {{ 1 / 3 }} {{ 2 ** 0.5 }} {{ -7.5 // -2 }}"),
      make("precedence", "{{ -2 ** 2 }} {{ 2 ** 3 ** 2 }} {{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 'a' ~ 1 + 2 }} {{ not true or true }}"),
      make("concat types", "{{ 'x' ~ none ~ true ~ 1.0 ~ [1] ~ nothing }}"),
      make("string and list operators", "{{ 'ab' * 3 }} {{ [1] * 2 }} {{ 'a' + 'b' }} {{ [1] + [2] }} {{ 2 * 'xy' }}"),
      make("bool arithmetic", "{{ true + 1 }} {{ true * 3 }} {{ false - 1 }}"),
      make("comparisons", "{{ 1 < 2 < 3 }} {{ 1 < 2 > 3 }} {{ 1 == 1.0 }} {{ true == 1 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ (1,) == [1] }} {{ none == none }}"),
      make("in and not in", "{{ 'b' in 'abc' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 3 not in [1] }} {{ 'x' in nothing }}"),
      make("and or return operands", "{{ 0 or 'x' }} {{ 'a' and 'b' }} {{ [] and 1 }} {{ none or none }}"),
      make("conditional expression", "{{ 'y' if 1 else 'n' }} {{ 'y' if 0 else 'n' }} [{{ 'y' if 0 }}] {{ 1 if 0 else 2 if 0 else 3 }}"),
      make("undefined equality", "{{ a == b }} {{ a != 0 }} {{ a is defined }} {{ a is undefined }}"),
      // access
      make("attribute and item", "{{ d.a }} {{ d['a'] }} {{ l[0] }} {{ l[-1] }} {{ l.1 }} {{ d.b.c }} {{ d['b']['c'] }}",
           R"({"d": {"a": 1, "b": {"c": "deep"}}, "l": [10, 20]})"),
      make("missing members", "[{{ l[5] }}][{{ d.zz }}][{{ s.zz }}][{{ n.zz }}]", R"({"l": [1], "d": {}, "s": "x", "n": null})"),
      make("slices", "{{ l[1:] }} {{ l[:2] }} {{ l[::2] }} {{ l[::-1] }} {{ l[-2:] }} {{ l[1:100] }} {{ 'abcdef'[1:4] }} {{ 'abc'[::-1] }}",
           R"({"l": [1, 2, 3, 4]})"),
      make("dict method wins over key", "{{ d.get('items') }} {{ (d|items|list)[0] }}", R"({"d": {"items": 5}})"),
      // statements
      make("if elif else", "{% for x in [1, 2, 3] %}{% if x == 1 %}one{% elif x == 2 %}two{% else %}other{% endif %};{% endfor %}"),
      make("for loop variables",
           "{% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}"
           "{{ loop.length }}[{{ loop.previtem }}|{{ loop.nextitem }}]{{ loop.cycle('x', 'y') }};{% endfor %}"),
      make("for else", "{% for x in [] %}x{% else %}empty{% endfor %}|{% for x in [1] %}{{ x }}{% else %}empty{% endfor %}"),
      make("for filter", "{% for x in range(10) if x is odd %}{{ x }}/{{ loop.length }} {% endfor %}"),
      make("for over dict and unpack", "{% for k in d %}{{ k }}{% endfor %} {% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}",
           R"({"d": {"b": 1, "a": 2}})"),
      make("for unpack mismatch", "{% for a, b in [[1, 2, 3]] %}{% endfor %}"),
      make("for over int", "{% for a in 5 %}{% endfor %}"),
      make("break continue", "{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% endfor %}"),
      make("loop scope", "{% set x = 1 %}{% for i in [1, 2] %}{{ x }}{% set x = x + 1 %}{{ x }}{% endfor %}{{ x }}"),
      make("if shares scope", "{% if true %}{% set y = 3 %}{% endif %}{{ y }}"),
      make("nested loops", "{% for a in [1, 2] %}{% for b in 'xy' %}{{ loop.index }}{{ a }}{{ b }} {% endfor %}{{ loop.index }}|{% endfor %}"),
      make("set tuple", "{% set a, b = [1, 2] %}{{ a }}{{ b }}"),
      make("set block", "{% set x %}  hi {{ 1 }} {% endset %}[{{ x }}]{% set y | upper | trim %} ab {% endset %}[{{ y }}]"),
      make("namespace", "{% set ns = namespace(a=1, b='x') %}{% for i in [1, 2] %}{% set ns.a = ns.a + i %}{% endfor %}{{ ns.a }} {{ ns.b }} {{ ns }}"),
      make("set attribute on dict fails", "{% set d = {} %}{% set d.a = 1 %}"),
      make("macro", "{% macro m(a, b=2) %}[{{ a }}{{ b }}]{% endmacro %}{{ m(1) }}{{ m(1, 3) }}{{ m(b=4, a=0) }}{{ m() }}{{ m(' x ')|trim }}"),
      make("macro reads globals at call", "{% macro m() %}{{ y }}{% endmacro %}{{ m() }}{% set y = 5 %}{{ m() }}"),
      make("macro namespace counter", "{% set c = namespace(n=0) %}{% macro inc() %}{% set c.n = c.n + 1 %}{{ c.n }}{% endmacro %}{{ inc() }}{{ inc() }}{{ c.n }}"),
      make("macro too many arguments", "{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}"),
      make("macro unknown keyword", "{% macro m(a) %}{% endmacro %}{{ m(c=1) }}"),
      make("macro recursion", "{% macro f(n) %}{{ n }}{% if n > 0 %}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(3) }}"),
      make("with", "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]"),
      make("filter block", "{% filter upper %}abc {{ 'd' }}{% endfilter %}"),
      // filters
      make("string filters", "{{ '  a b  '|trim }}|{{ 'xxaxx'|trim('x') }}|{{ 'abc'|upper }}|{{ 'ABC'|lower }}|{{ 'hello world'|title }}|{{ 'hELLO'|capitalize }}"),
      make("length and count", "{{ 'abc'|length }} {{ [1, 2]|count }} {{ {'a': 1}|length }} {{ nothing|length }}"),
      make("default", "{{ nothing|default('d') }} {{ none|default('d') }} {{ ''|default('d', true) }} {{ 'x'|d('y') }} {{ nothing|default }}"),
      make("join", "{{ [1, 2, 3]|join }} {{ ['a', 'b']|join(', ') }} {{ 'abc'|join('-') }} {{ users|join(', ', attribute='name') }}",
           R"({"users": [{"name": "ann"}, {"name": "bob"}]})"),
      make("first last", "{{ [1, 2, 3]|first }} {{ [1, 2, 3]|last }} {{ 'abc'|first }} [{{ []|first }}] {{ {'a': 1, 'b': 2}|last }}"),
      make("replace", "{{ 'a-b-c'|replace('-', '+') }} {{ 'a-b-c'|replace('-', '+', 1) }} {{ 'aaa'|replace('', '.') }}"),
      make("items", "{% for k, v in d|items %}{{ k }}:{{ v }} {% endfor %}{{ nothing|items|list }}", R"({"d": {"x": 1, "y": [2]}})"),
      make("items on string", "{% for k, v in 'ab'|items %}{% endfor %}"),
      make("list reverse sort unique", "{{ 'abc'|list }} {{ [1, 2, 3]|reverse|list }} {{ 'abc'|reverse }} {{ [3, 1, 2]|sort }} {{ [3, 1, 2]|sort(reverse=true) }} "
           "{{ ['b', 'A', 'a']|sort }} {{ ['b', 'A', 'a']|sort(case_sensitive=true) }} {{ [1, 2, 1, 3]|unique|list }} {{ ['a', 'A', 'b']|unique|list }}"),
      make("sort by attribute", "{{ users|sort(attribute='age')|map(attribute='name')|join(',') }}",
           R"({"users": [{"name": "a", "age": 30}, {"name": "b", "age": 20}, {"name": "c", "age": 25}]})"),
      make("min max sum", "{{ [3, 1, 2]|min }} {{ [3, 1, 2]|max }} {{ [1, 2, 3]|sum }} {{ [1.5, 2]|sum(start=1) }} [{{ []|max }}] {{ ['b', 'A']|max }}"),
      make("select reject", "{{ range(6)|select('odd')|list }} {{ range(6)|reject('odd')|list }} {{ [0, 1, '', 'a']|select|list }} {{ [1, 2, 3]|select('>', 1)|list }}"),
      make("selectattr", "{{ ms|selectattr('role', 'equalto', 'user')|map(attribute='c')|join }} {{ ms|rejectattr('role', 'eq', 'user')|list|length }} "
           "{{ ms|selectattr('c')|list|length }}",
           R"({"ms": [{"role": "user", "c": "a"}, {"role": "system", "c": ""}, {"role": "user", "c": "b"}]})"),
      make("map filter name", "{{ ['a', 'b']|map('upper')|join }} {{ [' a ', 'b ']|map('trim')|list }} {{ ms|map(attribute='x', default='-')|list }}",
           R"({"ms": [{"x": 1}, {}]})"),
      make("numbers", "{{ '42'|int + 1 }} {{ '3.7'|int }} {{ 'x'|int }} {{ 'x'|int(7) }} {{ 3.9|int }} {{ '2.5'|float }} {{ 3|float }} {{ 'x'|float }} "
           "{{ -3|abs }} {{ -2.5|abs }} {{ 2.5|round }} {{ 3.5|round }} {{ 2.675|round(2) }} {{ 2.1|round(0, 'ceil') }} {{ 2.9|round(method='floor') }} {{ 7|round }}"),
      make("string and safe", "{{ 5|string }} {{ none|string }} {{ [1]|string }} {{ 'x'|safe }} {{ nothing|string }}!"),
      make("escape", "{{ '<a href=\"x\">&\\'</a>'|escape }} {{ 5|e }}"),
      make("dictsort", "{{ d|dictsort }} {{ d|dictsort(reverse=true) }} {{ d|dictsort(by='value') }}", R"({"d": {"b": 1, "a": 3, "C": 2}})"),
      make("indent", "{{ 'a\nb\n\nc'|indent }}|{{ 'a\nb'|indent(2, first=true) }}|{{ 'a\n\nb'|indent(1, blank=true) }}"),
      make("tojson", "{{ d|tojson }}", R"({"d": {"s": "é\n\"<>&'\u0001", "n": [1, 2.5, null, true, false], "e": {}, "l": []}})"),
      make("tojson indent and keys", "{{ d|tojson(indent=2) }}|{{ d|tojson(sort_keys=true) }}|{{ d|tojson(ensure_ascii=true) }}|{{ d|tojson(separators=(',', ':')) }}",
           R"({"d": {"z": [1, {"b": "日本"}], "a": "😀"}})"),
      make("tojson tuple and keys", "{{ (1, 'a')|tojson }} {{ {1: 'x', none: 'y', true: 'z', 2.5: 'w'}|tojson }} {{ 'x'|tojson }} {{ 1e16|tojson }}"),
      make("tojson undefined", "{{ nothing|tojson }}"),
      // tests
      make("type tests",
           "{% for v in [1, 1.5, 'a', [1], {'a': 1}, none, true, nothing] %}{{ v is number }}{{ v is integer }}{{ v is float }}{{ v is string }}"
           "{{ v is sequence }}{{ v is iterable }}{{ v is mapping }}{{ v is boolean }}{{ v is none }}{{ v is defined }};{% endfor %}"),
      make("value tests", "{{ 4 is divisibleby 2 }}{{ 3 is odd }}{{ 4 is even }}{{ none is sameas none }}{{ true is true }}{{ 0 is false }}"
           "{{ 'abc' is lower }}{{ 'ABC' is upper }}{{ 2 is in [1, 2] }}{{ 1 is eq 1 }}{{ 1 is ne 1 }}{{ 1 is lt 2 }}{{ 1 is ge 2 }}{{ 'upper' is filter }}{{ 'odd' is test }}"),
      make("is not", "{{ x is not none }} {{ x is not string }} {{ y is not defined }}", R"({"x": "s"})"),
      make("callable tests", "{{ range is callable }} {{ 'x'.upper is callable }} {{ nothing is callable }} {{ 1 is callable }}"),
      // methods
      make("string methods",
           "{{ 'abc'.startswith('a') }} {{ 'abc'.startswith(('x', 'a')) }} {{ 'abc'.endswith('bc') }} {{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} "
           "{{ 'a b c'.split(' ', 1) }} {{ 'a b c'.rsplit(' ', 1) }} {{ ' x '.strip() }}| {{ 'xyx'.strip('x') }} {{ '  a'.lstrip() }} {{ 'a  '.rstrip() }}| "
           "{{ 'aXbX'.replace('X', '-') }} {{ 'ab'.upper() }} {{ 'AB'.lower() }} {{ 'abca'.find('c') }} {{ 'abca'.count('a') }} {{ '-'.join(['a', 'b']) }} "
           "{{ 'a\nb\r\nc'.splitlines() }} {{ 'prefix-x'.removeprefix('prefix-') }} {{ '12'.isdigit() }} {{ ' \t'.isspace() }}"),
      make("split unicode whitespace", "{{ s.split() }} {{ s.strip() }}", R"({"s": "\u00a0a\u3000b\u2028"})"),
      make("dict methods", "{{ d.get('a') }} {{ d.get('z', 'dflt') }} {{ d.get('z') }} {{ d.keys()|list }} {{ d.values()|list }} {{ d.items()|list }}",
           R"({"d": {"a": 1, "b": 2}})"),
      make("list methods", "{{ l.count(1) }} {{ l.index(2) }}", R"({"l": [1, 2, 1]})"),
      make("sandbox blocks list mutation", "{{ l.append(3) }}", R"({"l": [1]})"),
      make("sandbox blocks dict mutation", "{{ d.update({'a': 2}) }}", R"({"d": {}})"),
      make("unsafe attribute prints nothing", "[{{ l.append }}]", R"({"l": [1]})"),
      make("generators", "{{ [0, 1, 2]|select|list|length }} {% if []|select %}always{% endif %} {{ ([1]|map('string')|list)[0] }} "
           "{% set g = [1, 2]|map('string') %}{{ g|list }}{{ g|list }} {{ ([3, 4]|select)|first }} {{ [1, 2]|reverse|list }} "
           "{% set lazy = 'ab'|items %}lazy-ok {{ 2 in [1, 2, 3]|select }}"),
      make("generator has no length", "{{ [1]|map('string')|length }}"),
      make("generator is not reversible", "{{ [1]|select|last }}"),
      make("generator is not a sequence", "{{ [1]|select is sequence }} {{ [1]|select is iterable }}"),
      make("dict views", "{{ d.items() }} {{ d.keys() }} {{ d.values() }} {{ d.items()|length }} {{ 'a' in d.keys() }} {% if {}.items() %}T{% else %}F{% endif %}",
           R"({"d": {"a": 1, "b": [2]}})"),
      make("string modulo without specifiers", "{{ 'abc' % () }} {{ 'abc' % {'a': 1} }}"),
      make("string modulo with an argument", "{{ 'abc' % 5 }}"),
      // globals
      make("range", "{{ range(3)|list }} {{ range(1, 7, 2)|list }} {{ range(5, 0, -2)|list }} {{ range(0)|list }}"),
      make("dict global", "{{ dict(a=1, b='x') }}"),
      make("raise_exception", "{{ raise_exception('Conversation roles must alternate') }}"),
      make("raise_exception in branch", "{% if messages[0]['role'] == 'assistant' %}{{ raise_exception('bad first role') }}{% endif %}ok",
           R"({"messages": [{"role": "assistant"}]})"),
      // errors
      make("undefined attribute of undefined", "{{ x.y.z }}", R"({"x": {}})"),
      make("undefined arithmetic", "{{ nothing + 1 }}"),
      make("undefined comparison", "{{ nothing < 1 }}"),
      make("undefined call", "{{ nothing() }}"),
      make("undefined int filter", "{{ nothing|int }}"),
      make("type error add", "{{ 1 + 'a' }}"),
      make("type error compare", "{{ 1 < 'a' }}"),
      make("type error in", "{{ 1 in 'abc' }}"),
      make("type error length", "{{ 5|length }}"),
      make("zero division", "{{ 1 / 0 }}"),
      make("integer zero division", "{{ 1 // 0 }}"),
      make("unhashable key", "{{ {[1]: 2} }}"),
      make("unknown filter", "{{ x|nosuchfilter }}"),
      make("unknown filter in if", "{% if false %}{{ x|nosuchfilter }}{% endif %}ok"),
      make("unknown filter evaluated in if", "{% if true %}{{ x|nosuchfilter }}{% endif %}"),
      make("unknown filter in conditional expression", "{{ x|nosuchfilter if false else 1 }}"),
      make("unknown filter in loop", "{% for i in [] %}{{ x|nosuchfilter }}{% endfor %}"),
      make("unknown test", "{{ x is nosuchtest }}"),
      make("unknown tag", "{% frobnicate %}"),
      make("unclosed block", "{% if x %}"),
      make("stray end tag", "{% endif %}"),
      make("empty print", "{{ }}"),
      make("dangling operator", "{{ 1 + }}"),
      make("unbalanced bracket", "{{ [1, 2 }}"),
      make("unexpected char", "{{ 1 @ 2 }}"),
      make("unterminated comment", "{# x"),
      make("break outside loop", "{% break %}"),
      make("assign to constant", "{% set true = 1 %}"),
      make("non-default after default", "{% macro m(a=1, b) %}{% endmacro %}"),
      make("keyword before positional", "{{ range(stop=1, 2) }}"),
  };
}

TEST(JinjaTemplate, MatchesJinja2OnTheTable) { testing::expect_same_as_jinja2(table()); }

TEST(JinjaTemplate, ErrorsNameTheSourceAndLine) {
  try {
    jinja::Template::parse("line one\n{% if x %}\n{{ 1 + }}\n{% endif %}", "t.jinja");
    FAIL() << "expected a syntax error";
  } catch (const jinja::TemplateError& e) {
    EXPECT_EQ(e.kind(), jinja::ErrorKind::syntax);
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(std::string(e.what()), "t.jinja line 3: unexpected 'end of print statement'");
  }
  const auto tpl = jinja::Template::parse("a\nb\n{{ raise_exception('stop here') }}", "t.jinja");
  try {
    tpl.render({});
    FAIL() << "expected raise_exception to fail the render";
  } catch (const jinja::TemplateError& e) {
    EXPECT_EQ(e.kind(), jinja::ErrorKind::raised);
    EXPECT_EQ(std::string(e.what()), "t.jinja line 3: stop here");
  }
}

TEST(JinjaTemplate, RejectsWhatItDoesNotImplementClearly) {
  for (const char* source : {"{% include 'x' %}", "{% for x in y recursive %}{% endfor %}", "{{ f(*args) }}", "{{ x|groupby('a') }}",
                             "{{ 'a %s' % 1 }}", "{{ 99999999999999999999 }}", "{{ 2 ** 70 }}"}) {
    SCOPED_TRACE(source);
    try {
      jinja::Template::parse(source).render({});
      FAIL() << "expected an unsupported error";
    } catch (const jinja::TemplateError& e) {
      EXPECT_EQ(e.kind(), jinja::ErrorKind::unsupported) << e.what();
    }
  }
}

TEST(JinjaTemplate, RefusesNestingTooDeepToParse) {
  EXPECT_THROW(jinja::Template::parse("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}"), jinja::TemplateError);
  std::string nested;
  for (int i = 0; i < 5000; ++i) nested += "{% if true %}";
  EXPECT_THROW(jinja::Template::parse(nested), jinja::TemplateError);
  EXPECT_NO_THROW(jinja::Template::parse("{{ " + std::string(50, '(') + "1" + std::string(50, ')') + " }}"));
}

TEST(JinjaTemplate, RejectsInvalidUtf8) {
  EXPECT_THROW(jinja::Template::parse("ok \xff"), jinja::TemplateError);
}

TEST(JinjaTemplate, BoundsDeeplyNestedValues) {
  const auto lists = jinja::Template::parse("{% set ns = namespace(x=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}");
  EXPECT_THROW(lists.render({}), jinja::TemplateError);
  const auto namespaces = jinja::Template::parse(
      "{% set ns = namespace(x=none) %}{% for i in range(100000) %}{% set ns.x = namespace(x=ns.x) %}{% endfor %}");
  EXPECT_THROW(namespaces.render({}), jinja::TemplateError);
}

TEST(JinjaTemplate, BoundsSelfContainingValues) {
  const auto tpl = jinja::Template::parse("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}");
  EXPECT_THROW(tpl.render({}), jinja::TemplateError);
  const auto cycle = jinja::Template::parse(
      "{% set a = namespace() %}{% set b = namespace(a=a) %}{% set a.b = b %}{% set c = [a, b] %}{{ c|length }}{{ a }}");
  EXPECT_THROW(cycle.render({}), jinja::TemplateError);
}

TEST(JinjaTemplate, GenerationBlockRendersItsBody) {
  const auto tpl = jinja::Template::parse("{% generation %}answer{% endgeneration %}!");
  EXPECT_EQ(tpl.render({}), "answer!");
}

}  // namespace
}  // namespace rvformer::chat
