# A tiny stack-machine interpreter with jumps, running a loop that sums squares and a factorial.
def execute(program):
    stack, pc, memory, out = [], 0, {}, []
    while pc < len(program):
        op, *arg = program[pc].split()
        pc += 1
        if op == 'push':
            stack.append(int(arg[0]))
        elif op == 'load':
            stack.append(memory.get(arg[0], 0))
        elif op == 'store':
            memory[arg[0]] = stack.pop()
        elif op in ('add', 'sub', 'mul', 'lt'):
            b, a = stack.pop(), stack.pop()
            stack.append({'add': a + b, 'sub': a - b, 'mul': a * b, 'lt': int(a < b)}[op])
        elif op == 'jz':
            if stack.pop() == 0:
                pc = int(arg[0])
        elif op == 'jmp':
            pc = int(arg[0])
        elif op == 'print':
            out.append(stack.pop())
    return out

sum_squares = ['push 0', 'store s', 'push 1', 'store i',
               'load i', 'push 21', 'lt', 'jz 17',
               'load s', 'load i', 'load i', 'mul', 'add', 'store s',
               'load i', 'push 1', 'add', 'store i', 'jmp 4', 'load s', 'print']
sum_squares[7] = 'jz 19'
sum_squares[18] = 'jmp 4'
print(execute(sum_squares))
factorial = ['push 1', 'store f', 'push 30', 'store n',
             'push 0', 'load n', 'lt', 'jz 16',
             'load f', 'load n', 'mul', 'store f',
             'load n', 'push 1', 'sub', 'store n', 'jmp 4']
factorial[7] = 'jz 17'
factorial.append('load f')
factorial.append('print')
print(execute(factorial))
