def factorial(n):
    result = 1
    for k in range(2, n + 1):
        result *= k
    return result

f = factorial(300)
print(f)
print(len(str(f)))
print(str(f).count('0'))
