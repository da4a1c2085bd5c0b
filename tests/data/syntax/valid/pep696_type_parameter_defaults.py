# Python 3.13: type parameter defaults (PEP 696)
type Pair[T = int] = tuple[T, T]


def same[T = str](item: T) -> T:
    return item


class Registry[*Ts = *tuple[int, str]]:
    pass
