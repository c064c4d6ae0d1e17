"""Random sequences of API calls, good and bad, across front-ends, sync/async pools and autoreset modes: every call
either succeeds or raises a Python exception (no crash, no hang), and the pool stays usable afterwards."""

from __future__ import annotations

import faulthandler

import numpy as np
import pytest

import parallel_pool as pp

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

N = 4
HANG_SECONDS = 60  # a hang becomes a crash with every thread's stack printed, never a silent stall

ACTIONS = {
    "valid": lambda n: np.ones(n, np.int32),
    "float": lambda n: np.full(n, 0.5),
    "short": lambda n: np.ones(max(n - 1, 0), np.int32),
    "2d": lambda n: np.ones((n, 2), np.int32),
    "range": lambda n: np.full(n, 99, np.int32),
    "negative": lambda n: np.full(n, -1, np.int32),
    "scalar": lambda n: np.int32(1),
    "str": lambda n: np.array(["a"] * n),
    "dict": lambda n: {"action": np.ones(n, np.int32)},
    "bad_dict": lambda n: {"act": np.ones(n, np.int32)},
    "none": lambda n: None,
}
IDS = {
    "none": None,
    "subset": np.array([2, 0], np.int32),
    "one": np.array([3], np.int32),
    "dup": np.array([1, 1], np.int32),
    "out": np.array([N], np.int32),
    "neg": np.array([-1], np.int32),
    "float": np.array([0.0]),
    "2d": np.zeros((1, 1), np.int32),
    "empty": np.zeros(0, np.int32),
}
MASKS = {
    "some": np.array([True, False, True, False]),
    "none": np.zeros(N, bool),
    "int": np.array([1, 0, 1, 0]),
    "short": np.array([True]),
}

op = st.one_of(
    st.tuples(st.just("step"), st.sampled_from(sorted(ACTIONS)), st.sampled_from(sorted(IDS))),
    st.tuples(st.just("send"), st.sampled_from(sorted(ACTIONS)), st.sampled_from(sorted(IDS))),
    st.tuples(st.just("recv")),
    st.tuples(st.just("reset"), st.sampled_from(sorted(IDS)), st.sampled_from([None, 3, -1, "list"])),
    st.tuples(st.just("reset_mask"), st.sampled_from(sorted(MASKS))),
    st.tuples(st.just("async_reset")),
    st.tuples(st.just("close")),
)


def _n(ids):
    return N if ids is None else int(np.size(ids))


def _call(env, dm: bool, name: str, *args) -> None:
    if name in ("step", "send"):
        action_kind, ids_kind = args
        ids = IDS[ids_kind]
        getattr(env, name)(
            ACTIONS[action_kind](_n(ids) if ids is not None or not env.is_async else env.batch_size), ids
        )
    elif name == "recv":
        env.recv()
    elif name == "reset":
        ids_kind, seed = args
        ids = IDS[ids_kind]
        seed = list(range(_n(ids))) if seed == "list" else seed
        if dm:
            env.reset(env_id=ids, seed=seed)
        else:
            env.reset(seed=seed, env_id=ids)
    elif name == "reset_mask":
        env.reset(options={"reset_mask": MASKS[args[0]].copy()})
    elif name == "async_reset":
        env.async_reset()
    elif name == "close":
        env.close()


def _recover(env) -> None:
    """Collect what is pending, then a plain reset and a valid step must work."""
    for _ in range(4):
        for _ in range(N):
            try:
                env.recv()
            except Exception:
                break
        try:
            env.reset()
            break
        except Exception:
            pass
        for e in range(N):  # complete partial batches with resets: envs with a pending action refuse the send
            try:
                env.engine.send(None, np.array([e], np.int32), True, None)
            except Exception:
                pass
    else:
        raise AssertionError("the pool could not be brought back to a plain reset")
    n = env.batch_size
    env.step(np.ones(n, np.int32))


CONFIGS = [
    (env_type, batch_size, mode)
    for env_type in ("gymnasium", "dm")
    for batch_size in (N, 2)
    for mode in ("next_step", "same_step", "disabled")
    if not (env_type == "dm" and mode != "next_step")
]


@pytest.mark.parametrize("env_type,batch_size,mode", CONFIGS)
def test_random_call_sequences(env_type, batch_size, mode):
    config = dict(env_type=env_type, num_envs=N, batch_size=batch_size, autoreset_mode=mode, num_threads=2)

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(op, max_size=15))
    def run(ops):
        env = pp.make("Dummy-v0", episode_len=3, **config)
        dm = env_type == "dm"
        faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)
        try:
            for o in ops:
                try:
                    _call(env, dm, *o)
                except (ValueError, TypeError, RuntimeError, pp.EnvError):
                    pass  # a clear Python error is an allowed outcome; anything else fails the test
                if o[0] == "close":
                    with pytest.raises(RuntimeError, match="closed"):
                        env.step(np.ones(N, np.int32))
                    return
            _recover(env)
        finally:
            faulthandler.cancel_dump_traceback_later()
            env.close()

    run()
