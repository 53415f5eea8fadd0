class Range3:
    def __init__(self, stop):
        self.i = 0
        self.stop = stop

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= self.stop:
            raise StopIteration
        self.i += 3
        return self.i - 3

print(list(Range3(20)))
print(list(enumerate('abc', 1)), list(zip('abc', range(5), 'xyzw')))
print(list(reversed([1, 2, 3])), list(range(10, 0, -3)), list(range(5))[::-1])
it = iter([1, 2, 3])
print(next(it), next(it), next(it))
try:
    next(it)
except StopIteration:
    print('done')
print(list(map(lambda a, b: a * b, [1, 2, 3], [4, 5, 6])))
for i, (a, b) in enumerate(zip('xy', 'pq')):
    print(i, a, b)
