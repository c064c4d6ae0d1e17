"""Focused benchmark cases of `parallel-pool bench --case NAME` (see parallel_pool.bench.CASES)."""
