def quicksort(xs):
    if len(xs) <= 1:
        return xs
    pivot = xs[len(xs) // 2]
    return (quicksort([x for x in xs if x < pivot]) + [x for x in xs if x == pivot]
            + quicksort([x for x in xs if x > pivot]))

def merge_sort(xs):
    if len(xs) <= 1:
        return xs
    middle = len(xs) // 2
    left, right = merge_sort(xs[:middle]), merge_sort(xs[middle:])
    merged = []
    while left and right:
        merged.append(left.pop(0) if left[0] <= right[0] else right.pop(0))
    return merged + left + right

def insertion_sort(xs):
    xs = list(xs)
    for i in range(1, len(xs)):
        j = i
        while j > 0 and xs[j - 1] > xs[j]:
            xs[j - 1], xs[j] = xs[j], xs[j - 1]
            j -= 1
    return xs

seed = 12345
data = []
for _ in range(60):
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    data.append(seed % 1000)
print(data)
print(quicksort(data) == sorted(data), merge_sort(data) == sorted(data), insertion_sort(data) == sorted(data))
print(quicksort(data)[:10], merge_sort(data)[-10:])
