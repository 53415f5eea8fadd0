def hanoi(n, source, target, spare, moves):
    if n:
        hanoi(n - 1, source, spare, target, moves)
        moves.append((source, target))
        hanoi(n - 1, spare, target, source, moves)
    return moves

print(len(hanoi(10, 'A', 'C', 'B', [])), hanoi(3, 'A', 'C', 'B', []))

def ackermann(m, n):
    if m == 0:
        return n + 1
    if n == 0:
        return ackermann(m - 1, 1)
    return ackermann(m - 1, ackermann(m, n - 1))

print(ackermann(2, 3))

def permutations(items):
    if len(items) <= 1:
        return [items]
    result = []
    for i in range(len(items)):
        for p in permutations(items[:i] + items[i + 1:]):
            result.append(items[i:i + 1] + p)
    return result

print(permutations('abcd'))
def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)
print(depth(40))
