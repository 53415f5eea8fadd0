class InsufficientFunds(Exception):
    pass

class Account:
    def __init__(self, owner, balance=0):
        self.owner = owner
        self.balance = balance
        self.history = []

    def deposit(self, amount):
        self.balance += amount
        self.history.append(('deposit', amount))

    def withdraw(self, amount):
        if amount > self.balance:
            raise InsufficientFunds('%s has %d, needs %d' % (self.owner, self.balance, amount))
        self.balance -= amount
        self.history.append(('withdraw', amount))

class SavingsAccount(Account):
    def __init__(self, owner, balance=0, rate_percent=3):
        super().__init__(owner, balance)
        self.rate_percent = rate_percent

    def add_interest(self):
        self.deposit(self.balance * self.rate_percent // 100)

def transfer(source, target, amount):
    try:
        source.withdraw(amount)
    except InsufficientFunds as e:
        print('refused:', e.args[0])
        return False
    target.deposit(amount)
    return True

a = Account('ann', 100)
s = SavingsAccount('sam', 1000)
print(transfer(a, s, 30), transfer(a, s, 500))
for year in range(5):
    s.add_interest()
print(a.balance, s.balance, len(s.history), s.history[-1])
