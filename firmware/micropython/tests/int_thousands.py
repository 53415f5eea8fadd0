# An integer of thousands of digits, its digit sum and a few slices.
big = 2 ** 10000
text = str(big)
print(len(text))
print(text[:50])
print(text[-50:])
print(sum(int(d) for d in text))
