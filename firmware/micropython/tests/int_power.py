# Powers of two and three to hundreds of digits.
for n in (10, 64, 100, 256, 1000):
    print(n, 2 ** n)
print(3 ** 500)
print(len(str(7 ** 700)))
