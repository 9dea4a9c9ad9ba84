"""Streaming upserts: a feed of contest-shaped files, and a Structured Streaming query
that upserts each micro-batch into a LakeSoul table exactly once (README, "Streaming")."""
