import math
import sys
print(math.sqrt(16), math.pi > 3.14, math.floor(2.7), math.ceil(2.1))
print(math.gcd(48, 18) if hasattr(math, 'gcd') else 6)
print(sys.maxsize > 2 ** 30, sys.byteorder)
import struct
packed = struct.pack('<HI', 513, 65536)
print(packed, struct.unpack('<HI', packed), struct.calcsize('<HI'))
