def countdown(n):
    while n > 0:
        yield n
        n -= 1

def fibonacci():
    a, b = 0, 1
    while True:
        yield a
        a, b = b, a + b

def take(n, iterable):
    out = []
    for item in iterable:
        if len(out) == n:
            break
        out.append(item)
    return out

def chain(*iterables):
    for it in iterables:
        yield from it

print(list(countdown(5)))
print(take(15, fibonacci()))
print(list(chain([1, 2], (3, 4), countdown(2))))
gen = (x * x for x in range(5))
print(next(gen), next(gen), list(gen))
def echo():
    received = yield 'ready'
    while True:
        received = yield 'got %s' % received
e = echo()
print(next(e), e.send(1), e.send('two'))
