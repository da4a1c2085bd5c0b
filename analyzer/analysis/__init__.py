"""The analysis: the chat facts rules ask (histories, stores, sinks, retrieval, tool lists), the
rule base classes, and the per-module summaries the project pass links."""
