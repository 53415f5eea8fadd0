# chat/testdata/jinja_oracle.py — renders test cases with Python's Jinja2 set up the way Hugging Face
# renders chat templates (an immutable sandbox with trim_blocks and lstrip_blocks, loop controls, a
# tojson that is json.dumps(ensure_ascii=False), raise_exception), so the C++ engine's output can be
# compared byte for byte. Usage: jinja_oracle.py CASES.json RESULTS.json, where CASES.json is a list
# of {"template": str, "context": {...}} and RESULTS.json gets, per case, {"ok": true, "text": str}
# or {"ok": false, "kind": str, "message": str}.
import json
import sys

import jinja2
import jinja2.exceptions
import jinja2.ext
import jinja2.sandbox


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def environment():
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


# Most specific first: several of these derive from others.
KINDS = [
    (jinja2.exceptions.TemplateAssertionError, "assertion"),
    (jinja2.exceptions.TemplateSyntaxError, "syntax"),
    (SyntaxError, "syntax"),
    (jinja2.exceptions.UndefinedError, "undefined"),
    (jinja2.exceptions.SecurityError, "security"),
    (jinja2.exceptions.TemplateRuntimeError, "runtime"),
    (RecursionError, "runtime"),
    (ZeroDivisionError, "zero_division"),
    (OverflowError, "overflow"),
    (TypeError, "type"),
    (ValueError, "value"),
]


def kind_of(error):
    if type(error) is jinja2.exceptions.TemplateError:
        return "raised"
    for cls, kind in KINDS:
        if isinstance(error, cls):
            return kind
    return "other:" + type(error).__name__


def render(env, case):
    try:
        return {"ok": True, "text": env.from_string(case["template"]).render(**case["context"])}
    except Exception as error:  # every failure is a result to compare
        return {"ok": False, "kind": kind_of(error), "message": str(error)}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)
    env = environment()
    results = [render(env, case) for case in cases]
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(results, f, ensure_ascii=False)


if __name__ == "__main__":
    main()
