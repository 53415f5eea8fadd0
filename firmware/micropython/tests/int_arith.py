# Mixed-sign division, modulo, shifts and bit operations on big and small integers.
values = [7, -7, 12345678901234567890, -98765432109876543210, 3 ** 80]
divisors = [3, -3, 1000000007, -(2 ** 70)]
for a in values:
    for b in divisors:
        print(a // b, a % b, divmod(a, b))
x = 2 ** 200 - 1
print(x >> 37, x << 5, x & 0xffff, x | 1, x ^ (2 ** 100))
print(-x >> 3, (-x) & 0xff)
print(abs(-2 ** 90), -(2 ** 90) < 0, 2 ** 64 == 18446744073709551616)
