# Python 3.14: template strings (PEP 750)
name = "world"
greeting = t"hello {name}"
raw = rt"\d {name!r:>10}"
