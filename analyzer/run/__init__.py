"""The run: which files, which settings, the cache, the pre-check, one module through the rules,
the project pass that links modules, suppressions and baselines, and applying fixes."""
