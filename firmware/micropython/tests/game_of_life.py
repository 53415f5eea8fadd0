def step(cells, width, height):
    nxt = set()
    for y in range(height):
        for x in range(width):
            n = sum((x + dx, y + dy) in cells for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy)
            if n == 3 or (n == 2 and (x, y) in cells):
                nxt.add((x, y))
    return nxt

def show(cells, width, height):
    for y in range(height):
        print(''.join('#' if (x, y) in cells else '.' for x in range(width)))

glider = {(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)}
cells = glider
for generation in range(4):
    cells = step(cells, 8, 8)
show(cells, 8, 8)
print(sorted(cells))
