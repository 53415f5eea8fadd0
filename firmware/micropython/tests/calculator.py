# A small interpreter: tokenizer, recursive-descent parser and evaluator for arithmetic with variables.
def tokenize(text):
    tokens, i = [], 0
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif c.isdigit():
            j = i
            while j < len(text) and text[j].isdigit():
                j += 1
            tokens.append(('num', int(text[i:j])))
            i = j
        elif c.isalpha():
            j = i
            while j < len(text) and (text[j].isalpha() or text[j].isdigit()):
                j += 1
            tokens.append(('name', text[i:j]))
            i = j
        else:
            tokens.append(('op', c))
            i += 1
    return tokens

class Parser:
    def __init__(self, tokens, env):
        self.tokens, self.pos, self.env = tokens, 0, env

    def peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ('end', None)

    def take(self):
        token = self.peek()
        self.pos += 1
        return token

    def expression(self):
        value = self.term()
        while self.peek() in (('op', '+'), ('op', '-')):
            op = self.take()[1]
            value = value + self.term() if op == '+' else value - self.term()
        return value

    def term(self):
        value = self.factor()
        while self.peek() in (('op', '*'), ('op', '/'), ('op', '%')):
            op = self.take()[1]
            rhs = self.factor()
            value = value * rhs if op == '*' else value // rhs if op == '/' else value % rhs
        return value

    def factor(self):
        base = self.unary()
        if self.peek() == ('op', '^'):
            self.take()
            return base ** self.factor()
        return base

    def unary(self):
        kind, value = self.take()
        if (kind, value) == ('op', '-'):
            return -self.unary()
        if (kind, value) == ('op', '('):
            result = self.expression()
            self.take()
            return result
        if kind == 'num':
            return value
        if kind == 'name':
            return self.env[value]
        raise SyntaxError('unexpected %s' % value)

def run(program):
    env = {}
    for line in program.strip().split('\n'):
        name, expr = line.split('=', 1)
        env[name.strip()] = Parser(tokenize(expr), env).expression()
        print(name.strip(), '=', env[name.strip()])
    return env

run('''
a = 2 + 3 * 4
b = (a - 4) ^ 3 / 7
c = -a % 5 + b * b
big = 2 ^ 200 - c
''')
