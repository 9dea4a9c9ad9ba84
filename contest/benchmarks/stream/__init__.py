"""The streaming benchmark: its stages, peers and commit cost, and its page."""
