"""Update cost: how much of a document's encoder input must be recomputed after an edit (REFERENCE.md §6)."""
