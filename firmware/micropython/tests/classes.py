class Point:
    count = 0

    def __init__(self, x, y):
        self.x = x
        self.y = y
        Point.count += 1

    def __add__(self, other):
        return Point(self.x + other.x, self.y + other.y)

    def __eq__(self, other):
        return self.x == other.x and self.y == other.y

    def __repr__(self):
        return 'Point(%d, %d)' % (self.x, self.y)

    def norm1(self):
        return abs(self.x) + abs(self.y)

a = Point(1, 2)
b = Point(-3, 4)
print(a + b, a == Point(1, 2), a == b, (a + b).norm1(), Point.count)
print([p.norm1() for p in (a, b)], str(a), repr(b))
a.z = 5
print(a.z, hasattr(a, 'z'), hasattr(b, 'z'), getattr(b, 'x'))
setattr(b, 'x', 0)
print(b)
