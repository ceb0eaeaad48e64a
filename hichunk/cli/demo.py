"""``hichunk demo``: the README's first command (filled in as the pipeline lands)."""
