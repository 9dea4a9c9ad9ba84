"""Table maintenance, as users of lakehouse tables expect it: vacuum and compaction."""
