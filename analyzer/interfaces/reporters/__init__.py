"""Reporters: one module per output format."""
