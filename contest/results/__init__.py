"""Typed results records: one per results file, read and written only here."""
