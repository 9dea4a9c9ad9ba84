"""Data stage: the batches' shape and discovery, the generator, the oracle, the checker."""
