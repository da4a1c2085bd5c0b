"""Syntax helpers: LibCST and CPython trees, positions, scopes, constant values and texts, and
what one expression looks like as chat. No knowledge of rules or frameworks."""
