"""The analyzer's version; pyproject.toml reads it for the distribution's. Not in a
`chatbound/__init__.py`: `chatbound` is a namespace package that the analyzer and the engine
share, and neither ships one (docs/contributing.md, A development install)."""

__version__ = "0.1.0"
