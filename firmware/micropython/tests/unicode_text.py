s = 'naïve café – ünïcödé ✓'
print(s, len(s), 'plain ascii'.upper())
print(''.join(c for c in s if ord(c) > 127), [ord(c) for c in s if ord(c) > 127])
print(s[6:10], ''.join(reversed(s)), s.find('✓'), '|'.join(s.split('–')))
print('→'.join(['a', 'b', 'c']), 'ß' * 3)
print(len(s.encode('utf-8')))
