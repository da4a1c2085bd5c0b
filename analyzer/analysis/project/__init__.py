"""The project model: each module summarised once per content, summaries linked through imports.

`summary` reads one module (pure: no other module is read), `imports` reads import tables and
finds modules on disk, `demand` says which imported names a file asks about, `users` what
importers say of a module's agents. The project pass that links summaries for a file is
`chatbound.run.project`; the plain data both pass around is `chatbound.vocabulary.summaries`.
The chat facts (`chatbound.analysis.histories.imported`) consult what was linked for the file
they analyse. See docs/project-model.md for what crosses modules and what does not.
"""
