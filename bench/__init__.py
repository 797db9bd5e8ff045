"""Benchmarks: each prints its figures as ratios against a baseline run in the same process."""
