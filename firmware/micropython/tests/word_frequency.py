text = '''It was the best of times, it was the worst of times, it was the age of wisdom,
it was the age of foolishness, it was the epoch of belief, it was the epoch of incredulity'''
words = [w.strip(',.').lower() for w in text.split()]
freq = {}
for w in words:
    freq[w] = freq.get(w, 0) + 1
ranked = sorted(freq.items(), key=lambda kv: (-kv[1], kv[0]))
for word, count in ranked[:8]:
    print('%-12s %2d %s' % (word, count, '*' * count))
print(len(words), len(freq))
