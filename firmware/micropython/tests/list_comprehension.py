squares = [x * x for x in range(12)]
print(squares)
print([x for x in squares if x % 2 == 0])
print([(i, j) for i in range(4) for j in range(i)])
matrix = [[i * 3 + j for j in range(3)] for i in range(3)]
print(matrix)
print([list(row) for row in zip(*matrix)])
print([[row[i] for row in matrix] for i in range(3)])
print(sum(x for x in range(101)), any(x > 50 for x in squares), all(x >= 0 for x in squares))
