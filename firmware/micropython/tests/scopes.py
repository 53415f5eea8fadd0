counter = 0

def bump():
    global counter
    counter += 1
    return counter

bump()
bump()
print(counter)

def outer():
    value = 'outer'
    def inner():
        return value
    value = 'changed'
    return inner()

print(outer())

def accumulate():
    total = 0
    history = []
    def add(x):
        nonlocal total
        total += x
        history.append(total)
        return total
    return add, history

add, history = accumulate()
for k in range(1, 6):
    add(k)
print(history)
