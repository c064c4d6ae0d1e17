"""`python -m parallel_pool ...`: the same command as the `parallel-pool` console script (parallel_pool.cli)."""

import sys

from parallel_pool.cli import main

if __name__ == "__main__":
    sys.exit(main())
