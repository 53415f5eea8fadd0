def is_palindrome(s):
    cleaned = [c.lower() for c in s if c.isalpha()]
    return cleaned == cleaned[::-1]

def caesar(text, shift):
    out = []
    for c in text:
        if c.isalpha():
            base = ord('a') if c.islower() else ord('A')
            out.append(chr((ord(c) - base + shift) % 26 + base))
        else:
            out.append(c)
    return ''.join(out)

def run_length(text):
    out, i = [], 0
    while i < len(text):
        j = i
        while j < len(text) and text[j] == text[i]:
            j += 1
        out.append('%d%s' % (j - i, text[i]))
        i = j
    return ''.join(out)

def levenshtein(a, b):
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]

print(is_palindrome('A man, a plan, a canal: Panama'), is_palindrome('rvformer'))
secret = caesar('Hello, World!', 3)
print(secret, caesar(secret, -3))
print(run_length('aaabccddddde'))
print(levenshtein('kitten', 'sitting'), levenshtein('transformer', 'rvformer'))
