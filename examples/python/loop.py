total = 0
for i in range(100):
    total += i
print(total)
