s = 'abcdefghijklmnopqrstuvwxyz'
print(s[3], s[-1], s[2:5], s[:3], s[-3:], s[10:], ''.join(reversed(s)), list(s)[1:20:3])
print(s * 2)
print('xyz' in s, 'abd' in s)
print(len(s), min(s), max(s))
print(sorted('hello world'))
print([c for c in 'banana' if c != 'a'])
print(ord('A'), chr(97), [ord(c) for c in 'Hi!'])
