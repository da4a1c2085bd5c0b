"""chatbound: find chat code that replays its whole history on every model call."""

__version__ = "0.1.0"
