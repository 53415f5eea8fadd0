def multiply(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]

def power(m, n):
    result = [[int(i == j) for j in range(len(m))] for i in range(len(m))]
    while n:
        if n & 1:
            result = multiply(result, m)
        m = multiply(m, m)
        n >>= 1
    return result

fib = power([[1, 1], [1, 0]], 300)
print(fib[0][1])
a = [[1, 2, 3], [4, 5, 6]]
b = [[7, 8], [9, 10], [11, 12]]
print(multiply(a, b))
identity = power([[2, 0], [0, 3]], 40)
print(identity)
