xs = [5, 3, 8, 1, 9, 2]
xs.append(7)
xs.extend([4, 6])
xs.insert(0, 10)
print(xs, len(xs))
print(xs.pop(), xs.pop(0), xs)
xs.remove(8)
print(xs, xs.index(9), xs.count(3))
xs.reverse()
print(xs)
xs.sort()
print(xs, sorted(xs, reverse=True))
print(xs[1:4], xs[::-2])
del xs[2]
print(xs, xs + [100], [0] * 5)
ys = xs.copy()
ys[0] = -1
print(xs[0], ys[0], xs == ys, [1, 2] < [1, 3])
