class Animal:
    def __init__(self, name):
        self.name = name

    def speak(self):
        return '...'

    def describe(self):
        return '%s says %s' % (self.name, self.speak())

class Dog(Animal):
    def speak(self):
        return 'Woof'

class Puppy(Dog):
    def __init__(self, name, age):
        super().__init__(name)
        self.age = age

    def speak(self):
        return super().speak() + ' (squeak)'

class Cat(Animal):
    def speak(self):
        return 'Meow'

pets = [Dog('Rex'), Cat('Tom'), Puppy('Bit', 1), Animal('Thing')]
for pet in pets:
    print(pet.describe())
print(isinstance(pets[2], Dog), isinstance(pets[1], Dog), issubclass(Puppy, Animal), issubclass(Cat, Dog))
print(pets[2].age, pets[2].name)

class A:
    def who(self):
        return 'A'
class B(A):
    def who(self):
        return 'B' + super().who()
class Mixin:
    def extra(self):
        return 'mixin'
class C(B, Mixin):
    def who(self):
        return 'C' + super().who()
print(C().who(), C().extra(), isinstance(C(), Mixin))
