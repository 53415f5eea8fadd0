#!/usr/bin/env python3
"""Random calculator expressions and their exact values, for the calculator firmware's tests.

Writes PREFIX.in (one expression a line) and PREFIX.expected (the answer line the firmware must
print for each): expressions in the styles of DeepMind's mathematics arithmetic modules
(add_or_sub_big, mul_big, div_big, mixed_longer) and of NUPA (integers, decimals and fractions up
to 100 digits), then edge cases. The values come from Python's fractions.Fraction and are written
by the output rule of docs/calculator.md.
"""
import argparse
import random
import re
import sys
from fractions import Fraction

sys.set_int_max_str_digits(0)


def format_value(value):
    """The output rule: an integer; a terminating decimal when the reduced denominator is 2^a 5^b;
    else p/q."""
    if isinstance(value, int):
        value = Fraction(value)
    sign = "-" if value < 0 else ""
    numerator, denominator = abs(value.numerator), value.denominator
    if denominator == 1:
        return f"{sign}{numerator}"
    twos = fives = 0
    rest = denominator
    while rest % 2 == 0:
        rest //= 2
        twos += 1
    while rest % 5 == 0:
        rest //= 5
        fives += 1
    if rest != 1:
        return f"{sign}{numerator}/{denominator}"
    places = max(twos, fives)
    digits = str(numerator * 2 ** (places - twos) * 5 ** (places - fives)).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}"


NUMBER = re.compile(r"\d+\.?\d*|\.\d+")


def evaluate(expression):
    """The expected answer line: the exact value, or the error the firmware reports."""
    python = NUMBER.sub(lambda m: f"Fraction('{m.group(0)}')", expression)
    try:
        value = eval(python, {"Fraction": Fraction})
    except ZeroDivisionError:
        return "error: division by zero"
    if not isinstance(value, (int, Fraction)):
        raise ValueError(f"{expression!r} has no exact value ({value!r})")
    return format_value(value)


def integer(rng, digits, signed=True):
    value = rng.randrange(10 ** (digits - 1) if digits > 1 else 0, 10**digits)
    return -value if signed and rng.random() < 0.4 else value


def decimal(rng, int_digits, fraction_digits):
    whole = rng.randrange(10**int_digits)
    fraction = rng.randrange(10**fraction_digits)
    return f"{whole}.{str(fraction).rjust(fraction_digits, '0')}"


def operand(rng, value):
    """A signed number as an operand: negative ones in parentheses half of the time."""
    text = str(value)
    if text.startswith("-") and rng.random() < 0.5:
        return f"({text})"
    return text


def add_or_sub_big(rng):
    a, b = integer(rng, rng.randint(1, 30)), integer(rng, rng.randint(1, 30))
    if rng.random() < 0.2:
        a = decimal(rng, rng.randint(1, 12), rng.randint(1, 8))
    return f"{operand(rng, a)} {rng.choice('+-')} {operand(rng, b)}"


def mul_big(rng):
    a, b = integer(rng, rng.randint(1, 25)), integer(rng, rng.randint(1, 25))
    if rng.random() < 0.2:
        b = decimal(rng, rng.randint(1, 6), rng.randint(1, 6))
    return f"{operand(rng, a)}*{operand(rng, b)}"


def div_big(rng):
    divisor = integer(rng, rng.randint(1, 15))
    while divisor == 0:
        divisor = integer(rng, rng.randint(1, 15))
    if rng.random() < 0.6:
        dividend = divisor * integer(rng, rng.randint(1, 15))
    else:
        dividend = integer(rng, rng.randint(1, 30))
    return f"{operand(rng, dividend)} / {operand(rng, divisor)}"


def mixed_term(rng, depth):
    if depth == 0 or rng.random() < 0.3:
        return operand(rng, integer(rng, rng.randint(1, 3)))
    left, right = mixed_term(rng, depth - 1), mixed_term(rng, depth - 1)
    return f"({left} {rng.choice(['+', '-', '*', '/'])} {right})"


def mixed_longer(rng):
    terms = [mixed_term(rng, rng.randint(1, 3)) for _ in range(rng.randint(2, 5))]
    text = terms[0]
    for term in terms[1:]:
        text += f" {rng.choice(['+', '-', '*', '/'])} {term}"
    return text


def nupa_number(rng):
    kind = rng.random()
    if kind < 0.4:
        return operand(rng, integer(rng, rng.randint(1, 100)))
    if kind < 0.7:
        return decimal(rng, rng.randint(1, 50), rng.randint(1, 50))
    numerator = integer(rng, rng.randint(1, 50))
    denominator = integer(rng, rng.randint(1, 50), signed=False) or 7
    return f"({numerator}/{denominator})"


def nupa(rng):
    op = rng.choice(["+", "-", "*", "/", "//", "%", "**"])
    if op == "**":
        base = rng.choice([nupa_number(rng), operand(rng, integer(rng, rng.randint(1, 5)))])
        return f"{base}**{rng.randint(-4, 6)}"
    left, right = nupa_number(rng), nupa_number(rng)
    return f"{left} {op} {right}"


STYLES = [add_or_sub_big, mul_big, div_big, mixed_longer, nupa]

EDGE_CASES = [
    "0", "-0", "0.0", "007", "1.", ".5", "-1", "--1", "+-+1", "0*-5", "0/5", "0//7", "0%3",
    "-2**2", "2**-1", "2**3**2", "(-2)**3", "(-2)**-3", "-2**-2", "2**-2**2", "0**0", "(-1)**999999999999",
    "1**123456789012345678901234567890", "(1/2)**-10", "(-3/4)**3", "4**(3/3)",
    "7//2", "-7//2", "7//-2", "-7//-2", "7%3", "-7%3", "7%-3", "-7%-3", "7.5%2", "-7.5//2", "(1/3)%(1/4)",
    "1/3", "-1/3", "2/4", "1/8", "-1/8", "1/1024", "3/1000000000000", "10/4", "1/7+1/7", "0.1+0.2",
    "1.25", "-1.250", "0.000000000000000000001", "123456789.987654321", "1000",
    "2**100", "2**1000", "10**99", "-10**100", "(10**50+1)*(10**50-1)", "999999999*999999999",
    "1000000000*1000000000", "999999999999999999+1", "1000000000000000000-1", "10**18//999999999",
    "(10**40+7)//(10**20+3)", "(10**40+7)%(10**20+3)", "3**200//7**50", "3**200%7**50",
    "(" * 100 + "1" + ")" * 100, "((((((((((2))))))))))**((((3))))", " 1 + 2 ", "\t3\t*\t4\t", "1+2\r",
    "1/0", "1//0", "1%0", "0**-1", "(1/2)/(0*5)", "5/(3-3)", "1/(2-2)+1",
]


def huge_cases(rng):
    """Numbers of thousands of digits in and out."""
    big = str(integer(rng, 10000, signed=False))
    other_big = str(integer(rng, 10000, signed=False))
    five = [str(integer(rng, 5000, signed=False)) for _ in range(2)]
    thousand = [str(integer(rng, 1000, signed=False)) for _ in range(4)]
    return [
        f"{big}*7",
        f"{five[0]}*{five[1]}",
        f"{thousand[0]}*{thousand[1]}",
        f"{thousand[0]}{thousand[1]}//{thousand[2]}",
        f"{thousand[0]}{thousand[1]}%{thousand[2]}",
        f"{thousand[2]}/{thousand[3]}",
        f"{thousand[0]}*{thousand[1]}//{thousand[1]}",
        f"{big}-{big}",
        f"{big}*{other_big}",  # too large for Karatsuba's scratch space: schoolbook rows
        "2**33219",
        "3**-20",
        f"-{big}",
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("prefix")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--count", type=int, default=1000, help="random expressions")
    parser.add_argument("--no-edge-cases", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    expressions = [STYLES[i % len(STYLES)](rng) for i in range(args.count)]
    if not args.no_edge_cases:
        expressions += EDGE_CASES + huge_cases(rng)
    with open(args.prefix + ".in", "w", newline="\n") as inputs, open(args.prefix + ".expected", "w") as answers:
        for expression in expressions:
            inputs.write(expression + "\n")
            answers.write(evaluate(expression.strip()) + "\n")


if __name__ == "__main__":
    main()
