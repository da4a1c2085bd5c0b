# Python 3.12: an f-string's expression may reuse its quotes (PEP 701)
names = ["a", "b"]
joined = f"{", ".join(names)}"
