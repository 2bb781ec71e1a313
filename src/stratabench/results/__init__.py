"""Results: the versioned JSON Lines format, its records, writer and reader."""
