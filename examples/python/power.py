print(2**1000)
