"""Read stage: merge-on-read by primary key with a merge operator per column."""
