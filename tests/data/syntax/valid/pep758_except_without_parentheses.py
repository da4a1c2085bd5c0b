# Python 3.14: several exception types without parentheses (PEP 758)
try:
    value = int("x")
except ValueError, TypeError:
    value = 0

try:
    value = int("y")
except* ValueError, TypeError:
    value = 0
