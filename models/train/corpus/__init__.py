"""The training corpus: source packages fetched and converted to Markdown, labelled renderings, ground truth."""
