a, b = 0, 1
for i in range(500):
    a, b = b, a + b
print(a)
print(a % 1000000007)
print(a // 10 ** 90)
