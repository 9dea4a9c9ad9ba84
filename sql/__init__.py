"""LakeSoul's metadata schema and the project's own tables, shipped in the package as `meta.sql`."""
