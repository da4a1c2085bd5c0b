"""Every module in this package defines one rule; the registry finds them by import."""
