def gcd(a, b):
    while b:
        a, b = b, a % b
    return a

def is_prime(n):
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True

print([p for p in range(200) if is_prime(p)])
print(gcd(2 ** 100 * 3 ** 20, 6 ** 50))
print(gcd(12345678987654321, 11111111111))
