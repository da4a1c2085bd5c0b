"""The words the analysis, the frameworks and the project model answer in: sinks, facts about
histories, and module summaries. Plain records and the SDK call shapes, no dataflow."""
