def risky(kind):
    if kind == 0:
        return 1 // 0
    if kind == 1:
        return [][1]
    if kind == 2:
        return {}['missing']
    if kind == 3:
        return int('not a number')
    if kind == 4:
        raise RuntimeError('custom')
    return 'fine'

for kind in range(6):
    try:
        result = risky(kind)
    except ZeroDivisionError:
        print(kind, 'ZeroDivisionError')
    except IndexError:
        print(kind, 'IndexError')
    except KeyError:
        print(kind, 'KeyError')
    except ValueError:
        print(kind, 'ValueError')
    except Exception as error:
        print(kind, 'other', error.args)
    else:
        print(kind, 'no error', result)
    finally:
        print(kind, 'finally')
