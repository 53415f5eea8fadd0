# Building text: a multiplication table and a histogram.
for i in range(1, 8):
    print(' '.join('%3d' % (i * j) for j in range(1, 8)))
counts = {}
for word in 'the quick brown fox jumps over the lazy dog the end'.split():
    counts[word] = counts.get(word, 0) + 1
for word in sorted(counts):
    print('%-6s %s' % (word, '#' * counts[word]))
