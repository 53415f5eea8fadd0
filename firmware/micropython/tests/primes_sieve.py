def sieve(limit):
    is_prime = [True] * (limit + 1)
    is_prime[0] = is_prime[1] = False
    for n in range(2, int(limit ** 0.5) + 1):
        if is_prime[n]:
            for multiple in range(n * n, limit + 1, n):
                is_prime[multiple] = False
    return [n for n, prime in enumerate(is_prime) if prime]

primes = sieve(3000)
print(len(primes), primes[:20], primes[-5:])
prime_set = set(primes)
twins = [(p, p + 2) for p in primes if p + 2 in prime_set]
print(len(twins), twins[-3:])
