b = b'hello world'
print(b, len(b), b[0], b[1:5], b.upper(), b.split(b' '))
print(list(b'abc'), bytes([72, 105]), b'x' * 3, b'abc' + b'def')
ba = bytearray(b'abc')
ba[0] = 65
ba.append(68)
print(ba, bytes(ba), len(ba))
print('caf\u00e9'.encode('utf-8'), b'caf\xc3\xa9'.decode('utf-8'), len('caf\u00e9'))
print(b.find(b'world'), b'ab' in b'cabd', b.decode())
