class Temperature:
    def __init__(self, celsius):
        self._celsius = celsius

    @property
    def celsius(self):
        return self._celsius

    @celsius.setter
    def celsius(self, value):
        if value < -273:
            raise ValueError('below absolute zero')
        self._celsius = value

    @property
    def fahrenheit(self):
        return self._celsius * 9 // 5 + 32

    @staticmethod
    def describe():
        return 'a temperature'

    @classmethod
    def freezing(cls):
        return cls(0)

t = Temperature(100)
print(t.celsius, t.fahrenheit)
t.celsius = 37
print(t.celsius, t.fahrenheit)
try:
    t.celsius = -300
except ValueError:
    print('refused')
print(Temperature.describe(), Temperature.freezing().fahrenheit)
