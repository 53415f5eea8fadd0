class Recorder:
    def __init__(self, name, log):
        self.name = name
        self.log = log

    def __enter__(self):
        self.log.append('enter ' + self.name)
        return self

    def __exit__(self, kind, value, traceback):
        self.log.append('exit ' + self.name + (' with error' if kind else ''))
        return kind is ValueError

log = []
with Recorder('a', log) as r:
    log.append('body ' + r.name)
with Recorder('b', log):
    raise ValueError('swallowed')
try:
    with Recorder('c', log):
        raise KeyError('passes through')
except KeyError:
    log.append('caught KeyError')
for line in log:
    print(line)
