"""Write stage: concurrent versioned upserts into LakeSoul bucket files, and the
copy-on-write baseline."""
