class Vector:
    def __init__(self, *components):
        self.c = list(components)

    def __len__(self):
        return len(self.c)

    def __getitem__(self, i):
        return self.c[i]

    def __setitem__(self, i, value):
        self.c[i] = value

    def __mul__(self, k):
        return Vector(*[x * k for x in self.c])

    def __neg__(self):
        return Vector(*[-x for x in self.c])

    def __contains__(self, value):
        return value in self.c

    def __iter__(self):
        return iter(self.c)

    def __lt__(self, other):
        return self.c < other.c

    def __str__(self):
        return '<' + ', '.join(str(x) for x in self.c) + '>'

    def __call__(self, i):
        return self.c[i] * 10

v = Vector(1, 2, 3)
v[0] = 5
print(len(v), v[1], str(v * 3), str(-v), 2 in v, 9 in v, list(v), v(2))
print([str(x) for x in sorted([Vector(3), Vector(1), Vector(2)])])
print(sum(v), max(v))
