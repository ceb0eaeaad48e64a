"""Training split-point models from structured documents."""
