"""Benchmarks: loop-stopping quality against peer rules, and the cost of durability."""
