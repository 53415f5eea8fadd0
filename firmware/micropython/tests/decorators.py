calls = []

def logged(function):
    def wrapper(*args):
        calls.append(args)
        return function(*args)
    return wrapper

def memoize(function):
    cache = {}
    def wrapper(n):
        if n not in cache:
            cache[n] = function(n)
        return cache[n]
    return wrapper

@logged
def add(a, b):
    return a + b

@memoize
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

print(add(1, 2), add(3, 4), calls)
# Filled in order, so that no call goes deeper than two memoized levels.
print([fib(i) for i in range(81)][-1])
