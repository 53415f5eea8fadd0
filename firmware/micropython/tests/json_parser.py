# A JSON-ish parser and serializer written in Python.
class Parser:
    def __init__(self, text):
        self.text, self.i = text, 0

    def skip(self):
        while self.i < len(self.text) and self.text[self.i] in ' \n\t\r':
            self.i += 1

    def expect(self, c):
        self.skip()
        if self.text[self.i] != c:
            raise ValueError('expected %s at %d' % (c, self.i))
        self.i += 1

    def value(self):
        self.skip()
        c = self.text[self.i]
        if c == '{':
            return self.obj()
        if c == '[':
            return self.array()
        if c == '"':
            return self.string()
        for word, result in (('true', True), ('false', False), ('null', None)):
            if self.text.startswith(word, self.i):
                self.i += len(word)
                return result
        return self.number()

    def obj(self):
        self.expect('{')
        result = {}
        self.skip()
        if self.text[self.i] == '}':
            self.i += 1
            return result
        while True:
            key = self.string()
            self.expect(':')
            result[key] = self.value()
            self.skip()
            if self.text[self.i] == '}':
                self.i += 1
                return result
            self.expect(',')
            self.skip()

    def array(self):
        self.expect('[')
        result = []
        self.skip()
        if self.text[self.i] == ']':
            self.i += 1
            return result
        while True:
            result.append(self.value())
            self.skip()
            if self.text[self.i] == ']':
                self.i += 1
                return result
            self.expect(',')

    def string(self):
        self.expect('"')
        out = []
        while self.text[self.i] != '"':
            c = self.text[self.i]
            if c == '\\':
                self.i += 1
                c = {'n': '\n', 't': '\t', '"': '"', '\\': '\\'}[self.text[self.i]]
            out.append(c)
            self.i += 1
        self.i += 1
        return ''.join(out)

    def number(self):
        start = self.i
        while self.i < len(self.text) and self.text[self.i] in '-0123456789':
            self.i += 1
        return int(self.text[start:self.i])

def dumps(value):
    if value is None:
        return 'null'
    if value is True:
        return 'true'
    if value is False:
        return 'false'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value.replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n') + '"'
    if isinstance(value, list):
        return '[' + ', '.join(dumps(v) for v in value) + ']'
    return '{' + ', '.join(dumps(k) + ': ' + dumps(value[k]) for k in sorted(value)) + '}'

document = '''
{"name": "rvformer", "layers": 17, "tags": ["riscv", "transformer"],
 "nested": {"ok": true, "none": null, "neg": -42, "empty": [], "obj": {}},
 "text": "line\\nbreak \\"quoted\\""}
'''
parsed = Parser(document).value()
print(dumps(parsed))
print(parsed['tags'][1], parsed['nested']['neg'] * 2, parsed['text'])
print(dumps(Parser(dumps(parsed)).value()) == dumps(parsed))
