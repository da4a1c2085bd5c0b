"""`python -m chatbound`."""

from .cli import main

main(prog_name="chatbound")
