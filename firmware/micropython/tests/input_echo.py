# Reads console input until its end (none is given in the corpus test: EOFError at once).
lines = []
while True:
    try:
        lines.append(input())
    except EOFError:
        break
print(len(lines), lines)
