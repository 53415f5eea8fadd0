class AppError(Exception):
    pass

class NotFound(AppError):
    def __init__(self, key):
        super().__init__(key)
        self.key = key

def lookup(table, key):
    if key not in table:
        raise NotFound(key)
    return table[key]

table = {'a': 1}
for key in ('a', 'b'):
    try:
        print(lookup(table, key))
    except AppError as e:
        print('not found:', e.key, isinstance(e, NotFound), e.args)

def cleanup_order():
    log = []
    try:
        try:
            log.append('try')
            raise KeyError('k')
        finally:
            log.append('inner finally')
    except KeyError:
        log.append('caught')
    return log

print(cleanup_order())

def reraise():
    try:
        raise ValueError('first')
    except ValueError:
        try:
            raise
        except ValueError as again:
            return again.args

print(reraise())

def returns_in_finally():
    try:
        return 'try'
    finally:
        print('finally runs before the return')

print(returns_in_finally())
