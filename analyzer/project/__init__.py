"""The project model: each module summarised once per content, summaries linked through imports.

`summary` reads one module (pure: no other module is read), `index` is the project pass that
links summaries for a file through its imports, `imports` reads import tables and finds
modules on disk, `model` holds the plain data both pass around. The chat facts
(`chatbound.histories.imported`) consult what was linked for the file they analyse.
See docs/project-model.md for what crosses modules and what does not.
"""
