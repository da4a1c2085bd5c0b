"""The few names a test app calls, answering offline: the reply says how many messages came."""

from types import SimpleNamespace


class _Completions:
    def create(self, *, model: str, messages: list, **options):
        content = f"{model} read {len(messages)} messages"
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(role="assistant", content=content))])


class OpenAI:
    def __init__(self, **options):
        self.chat = SimpleNamespace(completions=_Completions())
