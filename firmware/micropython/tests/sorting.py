people = [('alice', 31, 'paris'), ('bob', 25, 'rome'), ('carol', 35, 'oslo'),
          ('dave', 28, 'lima'), ('eve', 22, 'kyiv'), ('frank', 40, 'baku')]
print(sorted(people))
print(sorted(people, key=lambda p: p[1]))
print(sorted(people, key=lambda p: p[2], reverse=True))
print([p[0] for p in sorted(people, key=lambda p: (len(p[0]), p[0]))])
numbers = [31, -4, 15, -9, 26, 5, -35, 8]
numbers.sort(key=abs)
print(numbers)
print(sorted(numbers, key=lambda n: (n % 3, n)))
print(min(people, key=lambda p: p[1]), max(numbers, key=lambda n: -n))
words = 'Banana apple Cherry date Elderberry fig'.split()
print(sorted(words), sorted(words, key=lambda w: w.lower()))
