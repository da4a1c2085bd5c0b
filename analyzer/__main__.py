"""`python -m chatbound`."""

from chatbound.interfaces.cli import main

main(prog_name="chatbound")
