"""The interfaces: what a user or an editor talks to (command line, language server, reporters, docs).

They wire options to the run and lay findings out; they hold no analysis."""
