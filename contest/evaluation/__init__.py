"""Evaluation: strategies, the contest's timed procedure, comparisons, results and sweeps."""
