# Breadth-first search on a grid maze, and Dijkstra on a small weighted graph.
maze = ['S.#.....',
        '.##.###.',
        '....#...',
        '.##...#E']

def bfs(maze):
    rows, cols = len(maze), len(maze[0])
    start = end = None
    for r in range(rows):
        for c in range(cols):
            if maze[r][c] == 'S':
                start = (r, c)
            if maze[r][c] == 'E':
                end = (r, c)
    queue, seen = [(start, 0)], {start}
    while queue:
        (r, c), d = queue.pop(0)
        if (r, c) == end:
            return d
        for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            nr, nc = r + dr, c + dc
            if 0 <= nr < rows and 0 <= nc < cols and maze[nr][nc] != '#' and (nr, nc) not in seen:
                seen.add((nr, nc))
                queue.append(((nr, nc), d + 1))
    return -1

print(bfs(maze))
graph = {'a': {'b': 7, 'c': 9, 'f': 14}, 'b': {'a': 7, 'c': 10, 'd': 15}, 'c': {'a': 9, 'b': 10, 'd': 11, 'f': 2},
         'd': {'b': 15, 'c': 11, 'e': 6}, 'e': {'d': 6, 'f': 9}, 'f': {'a': 14, 'c': 2, 'e': 9}}
def dijkstra(graph, source):
    dist = {source: 0}
    todo = set(graph)
    while todo:
        node = min(todo, key=lambda n: (dist.get(n, 10 ** 9), n))
        todo.remove(node)
        for nb, w in graph[node].items():
            if dist[node] + w < dist.get(nb, 10 ** 9):
                dist[nb] = dist[node] + w
    return sorted(dist.items())
print(dijkstra(graph, 'a'))
