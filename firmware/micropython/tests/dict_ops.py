d = {'one': 1, 'two': 2, 'three': 3}
d['four'] = 4
print(sorted(d.items()))
print(d['two'], d.get('five'), d.get('five', 5), 'one' in d, 'ten' in d)
print(sorted(d.keys()), sorted(d.values()), len(d))
print(d.pop('one'), sorted(d))
d.update({'five': 5, 'two': 22})
print(sorted(d.items()))
print(d.setdefault('six', 6), d.setdefault('two', 0))
e = dict(a=1, b=2)
e.update([('c', 3)])
print(sorted(e.items()))
del e['a']
print(sorted(e.items()), {} == dict())
