type Key = str
def f(:
    pass
