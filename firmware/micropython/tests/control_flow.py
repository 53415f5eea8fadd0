for n in range(2, 30):
    for d in range(2, n):
        if n % d == 0:
            break
    else:
        print(n, 'is prime')
i = 0
while i < 10:
    i += 1
    if i % 2:
        continue
    if i == 8:
        break
    print('even', i)
else:
    print('not reached')
x = 15
print('fizzbuzz' if x % 15 == 0 else 'fizz' if x % 3 == 0 else x)
print([('fizzbuzz' if k % 15 == 0 else 'fizz' if k % 3 == 0 else 'buzz' if k % 5 == 0 else str(k)) for k in range(1, 21)])
print(1 < 2 < 3, 3 > 2 > 2, not [], [] or 'default', 0 and 'never', None is None)
