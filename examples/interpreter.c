// interpreter.c — two small interpreters: a recursive-descent evaluator for arithmetic
// expressions and a Brainfuck machine running a program that prints a message.
#include <stdio.h>
#include <string.h>

// expression := term (('+' | '-') term)* ; term := factor (('*' | '/' | '%') factor)* ;
// factor := number | '-' factor | '(' expression ')'
typedef struct {
    const char* text;
    int error;
} Parser;

static long expression(Parser* parser);

static void skip_spaces(Parser* parser) {
    while (*parser->text == ' ') ++parser->text;
}

static long factor(Parser* parser) {
    skip_spaces(parser);
    char c = *parser->text;
    if (c == '-') {
        ++parser->text;
        return -factor(parser);
    }
    if (c == '(') {
        ++parser->text;
        long value = expression(parser);
        skip_spaces(parser);
        if (*parser->text++ != ')') parser->error = 1;
        return value;
    }
    if (c < '0' || c > '9') {
        parser->error = 1;
        return 0;
    }
    long value = 0;
    while (*parser->text >= '0' && *parser->text <= '9') value = value * 10 + (*parser->text++ - '0');
    return value;
}

static long term(Parser* parser) {
    long value = factor(parser);
    for (;;) {
        skip_spaces(parser);
        char op = *parser->text;
        if (op != '*' && op != '/' && op != '%') return value;
        ++parser->text;
        long right = factor(parser);
        if (op != '*' && right == 0) {
            parser->error = 1;
            return 0;
        }
        value = op == '*' ? value * right : op == '/' ? value / right : value % right;
    }
}

static long expression(Parser* parser) {
    long value = term(parser);
    for (;;) {
        skip_spaces(parser);
        char op = *parser->text;
        if (op != '+' && op != '-') return value;
        ++parser->text;
        long right = term(parser);
        value = op == '+' ? value + right : value - right;
    }
}

static void evaluate(const char* text) {
    Parser parser = {text, 0};
    long value = expression(&parser);
    skip_spaces(&parser);
    if (parser.error || *parser.text) {
        printf("%-28s -> error\n", text);
    } else {
        printf("%-28s -> %ld\n", text, value);
    }
}

static void brainfuck(const char* program) {
    unsigned char tape[256] = {0};
    int head = 0;
    unsigned steps = 0;
    for (const char* pc = program; *pc; ++pc, ++steps) {
        switch (*pc) {
            case '>': head = (head + 1) & 255; break;
            case '<': head = (head - 1) & 255; break;
            case '+': ++tape[head]; break;
            case '-': --tape[head]; break;
            case '.': putchar(tape[head]); break;
            case '[':  // skip forward to the matching ']'
                for (int depth = !tape[head]; depth;) {
                    ++pc;
                    depth += (*pc == '[') - (*pc == ']');
                }
                break;
            case ']':  // go back to the matching '['
                for (int depth = tape[head] != 0; depth;) {
                    --pc;
                    depth += (*pc == ']') - (*pc == '[');
                }
                break;
        }
    }
    printf("(brainfuck: %u steps)\n", steps);
}

int main(void) {
    const char* expressions[] = {"1 + 2 * 3", "(1 + 2) * 3", "2 * (3 + 4) - 10 / 3", "-(5 - 8) * -(2)",
                                 "100 % 7 + 1000000 / 1000", "((((42))))", "1 / (2 - 2)", "3 + * 4"};
    for (int i = 0; i < 8; ++i) evaluate(expressions[i]);
    brainfuck("++++++++[>++++[>++>+++>+++>+<<<<-]>+>+>->>+[<]<-]>>.>---.+++++++..+++.>>.<-.<.+++.------.--------.>>+.>++.");
    return 0;
}
