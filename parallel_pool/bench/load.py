"""Competing load for the contention measurements: one process of one load shape, run until it is killed.

    python -m parallel_pool.bench.load spin              # one CPU busy in a pure-Python loop
    python -m parallel_pool.bench.load torch --threads 4 # an MLP trained with torch on 4 threads (a learner)

`torch` prints "ready" once torch is imported and the model built, so the caller can wait for its steady state.
"""

from __future__ import annotations

import argparse
import sys


def spin() -> None:
    while True:
        pass


def train_mlp(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(256, 512),
        torch.nn.ReLU(),
        torch.nn.Linear(512, 512),
        torch.nn.ReLU(),
        torch.nn.Linear(512, 64),
    )
    opt = torch.optim.Adam(net.parameters(), lr=1e-4)
    x = torch.randn(512, 256)
    print("ready", flush=True)
    while True:
        loss = net(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m parallel_pool.bench.load", description=__doc__.split("\n\n")[0])
    p.add_argument("shape", choices=["spin", "torch"])
    p.add_argument("--threads", type=int, default=1, help="torch's threads")
    a = p.parse_args(argv)
    if a.shape == "spin":
        spin()
    train_mlp(a.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
