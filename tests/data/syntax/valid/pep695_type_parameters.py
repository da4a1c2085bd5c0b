# Python 3.12: type aliases and type parameters (PEP 695)
type ModelT = ChatOpenAI | ChatAnthropic


def first[T](items: list[T]) -> T:
    return items[0]


class Box[T]:
    def __init__(self, item: T) -> None:
        self.item = item
