def make_counter(start):
    count = start
    def increment(step=1):
        nonlocal count
        count += step
        return count
    return increment

c = make_counter(10)
print(c(), c(), c(5))
d = make_counter(0)
print(d(), c())

def make_multipliers():
    return [lambda x, k=k: x * k for k in range(5)]

print([m(3) for m in make_multipliers()])

def compose(*functions):
    def composed(x):
        for f in reversed(functions):
            x = f(x)
        return x
    return composed

print(compose(lambda x: x + 1, lambda x: x * 2)(5))
