t = (1, 'two', 3.0, (4, 5))
print(t, len(t), t[1], t[-1][0], t[1:3])
a, b, *rest = [1, 2, 3, 4, 5]
print(a, b, rest)
x, y = 1, 2
x, y = y, x
print(x, y)
s = {3, 1, 4, 1, 5, 9, 2, 6}
u = {2, 7, 1, 8}
print(sorted(s), len(s), 4 in s, 7 in s)
print(sorted(s | u), sorted(s & u), sorted(s - u), sorted(s ^ u))
s.add(100)
s.discard(3)
print(sorted(s), {1, 2} <= {1, 2, 3}, frozenset([1, 2]) == frozenset([2, 1]))
print((1, 2) + (3,), (0,) * 3, (1, 2) < (1, 3))
