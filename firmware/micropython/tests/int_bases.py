for n in (0, 1, 255, 4096, -42, 2 ** 70):
    print(n, hex(n), oct(n), bin(n))
print(int('ff', 16), int('-777', 8), int('101010', 2), int('zz', 36))
print(int('123456789012345678901234567890'))
print('%d %5d %-5d| %x %X %o' % (42, 42, 42, 255, 255, 8))
