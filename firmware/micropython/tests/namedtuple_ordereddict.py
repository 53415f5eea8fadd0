from collections import namedtuple, OrderedDict

Point = namedtuple('Point', ('x', 'y'))
p = Point(3, 4)
print(p.x, p.y, p[0], p[1], p == (3, 4), p.x * p.y)
q = Point(y=1, x=2)
print(q.x, q.y, len(q), list(q))
od = OrderedDict()
for key in ('zeta', 'alpha', 'mu'):
    od[key] = len(key)
print(list(od.keys()), list(od.values()))
