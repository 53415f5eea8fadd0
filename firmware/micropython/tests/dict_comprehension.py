squares = {n: n * n for n in range(10)}
print(sorted(squares.items()))
inverted = {v: k for k, v in squares.items()}
print(sorted(inverted.items()))
words = 'apple banana cherry avocado blueberry cranberry apricot'.split()
by_letter = {}
for w in words:
    by_letter.setdefault(w[0], []).append(w)
for letter in sorted(by_letter):
    print(letter, sorted(by_letter[letter]))
print(sorted({len(w) for w in words}))
