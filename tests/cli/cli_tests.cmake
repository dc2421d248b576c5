# CLI tests: added in a later commit.
