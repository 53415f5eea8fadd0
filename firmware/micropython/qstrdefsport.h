// firmware/micropython/qstrdefsport.h — the port adds no qstrs of its own.
