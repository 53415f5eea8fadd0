def greet(name, greeting='Hello', *rest, punctuation='!', **extra):
    text = '%s, %s%s' % (greeting, name, punctuation)
    if rest:
        text += ' ' + ' '.join(str(r) for r in rest)
    for key in sorted(extra):
        text += ' %s=%s' % (key, extra[key])
    return text

print(greet('Ada'))
print(greet('Bob', 'Hi'))
print(greet('Cy', 'Hey', 1, 2, punctuation='?'))
print(greet('Di', colour='red', size=3))
args = ('Ed', 'Yo')
kwargs = {'punctuation': '.'}
print(greet(*args, **kwargs))
square = lambda v: v * v
print(list(map(square, range(6))), list(filter(lambda v: v % 3 == 0, range(20))))
