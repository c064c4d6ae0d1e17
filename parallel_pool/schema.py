"""The layout of one result batch, read once from the engine's `output_specs`.

The engine returns a batch as a flat tuple of arrays; `_core.Engine.output_specs` names each one:
"obs" or "obs:<key>" (observations), "reward", "terminated", "truncated", "env_id", "elapsed_step",
"players.env_id", "info:<key>" (env info) and "final:<name>" (same-step autoreset's copies of the finished
episode's last observation/info). `Schema` turns those names into indices once, so every front-end (and the XLA
path, on jax arrays) reads a batch the same way. This module sits at the bottom of the package: it imports only
numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Field", "Schema", "action_list", "row_info", "tree_map"]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """`f` applied to an observation-like value, which is either one array or a dict of named arrays (an env with
    several observation keys; nested dicts for a Python env's nested spaces): f(tree), or {key: f(tree[key], *(r[key]
    for r in rest))} at every depth. With `rest`, f gets the matching entries of every tree (all of the same form).
    The one place that knows the forms."""
    if isinstance(tree, dict):
        return {k: tree_map(f, v, *(r[k] for r in rest)) for k, v in tree.items()}
    return f(tree, *rest)


def row_info(info: dict[str, Any], i: int, skip: Any = ()) -> dict[str, Any]:
    """Row i of a batched info dict as one env's info: the keys whose `_key` mask is True in row i (every key
    without a mask), nested dicts alike; the masks themselves left out."""
    out = {}
    for key, value in info.items():
        if key in skip or (type(key) is str and key[:1] == "_" and key[1:] in info):
            continue
        mask = info.get(f"_{key}")
        if mask is not None and not mask[i]:
            continue
        out[key] = row_info(value, i) if isinstance(value, dict) else value[i]
    return out


@dataclass(frozen=True)
class Field:
    """One output array: its name, dtype, shape of one row, and whether it has a row per player (else per env)."""

    name: str
    dtype: np.dtype
    shape: tuple[int, ...]
    per_player: bool


class Schema:
    """Where each part of a result batch sits in the engine's output tuple."""

    def __init__(
        self, output_specs: Sequence[tuple[str, Any, Sequence[int], bool]], obs_paths: dict[str, Any] | None = None
    ):
        """`obs_paths`: each observation key's place in nested dicts (a Python env's nested Dict/Tuple space,
        python_env.obs_paths); None: the observation is one array or one flat dict. `output_specs` is kept: an engine
        whose layout grows (a Python env's info key seen late gets a typed array, process_engine) appends to it, and
        `refresh` reads it again."""
        self._specs = output_specs
        self._paths = obs_paths
        self._build()

    def refresh(self, arrays: Sequence[Any]) -> None:
        """Read the engine's layout again where a batch has more arrays than this schema (it grew since)."""
        if len(arrays) != len(self.fields) and len(arrays) == len(self._specs):
            self._build()

    def _build(self) -> None:
        output_specs = self._specs
        obs_paths = self._paths
        self.fields: tuple[Field, ...] = tuple(
            Field(name, np.dtype(dtype), tuple(shape), bool(per_player))
            for name, dtype, shape, per_player in output_specs
        )
        self.index: dict[str, int] = {f.name: i for i, f in enumerate(self.fields)}
        names = [f.name for f in self.fields]
        # observation keys: ("obs",) for a plain array observation, else the dict keys in engine order
        self.single_obs: bool = "obs" in self.index
        self.obs_keys: tuple[str, ...] = (
            ("obs",) if self.single_obs else tuple(n[len("obs:") :] for n in names if n.startswith("obs:"))
        )
        self.info_keys: tuple[str, ...] = tuple(n[len("info:") :] for n in names if n.startswith("info:"))
        self.has_final: bool = any(n.startswith("final:") for n in names)
        self.reward, self.terminated, self.truncated = (self.index[n] for n in ("reward", "terminated", "truncated"))
        self.env_id, self.elapsed_step = self.index["env_id"], self.index["elapsed_step"]
        self.players_env_id = self.index["players.env_id"]
        self.mask_cache: dict[tuple[int, int], Any] = {}  # the front-ends' read-only info masks, per batch shape
        # (key, index) pairs per prefix ("" and "final:"), computed once: read on every batch
        self._obs_at = {
            p: tuple((k, self.index[p + self.obs_name(k)]) for k in self.obs_keys)
            for p in ("", "final:")
            if p + self.obs_name(self.obs_keys[0]) in self.index
        }
        # observation leaves of Python objects (a Python env's Text, Graph, Sequence, OneOf...): handed over as a
        # tuple of one object per row, as gymnasium's SyncVectorEnv does
        self._objects = tuple(self.fields[self.index[self.obs_name(k)]].dtype == object for k in self.obs_keys)
        if not any(self._objects):
            self._objects = ()
        self.obs_paths = obs_paths
        self._info_at = {
            p: tuple((k, self.index[p + "info:" + k]) for k in self.info_keys)
            for p in ("", "final:")
            if all(p + "info:" + k in self.index for k in self.info_keys)
        }
        self.info_at: tuple[tuple[str, int], ...] = self._info_at[""]  # (key, index) of the env's own info arrays
        # a Python env's batch (parallel_pool.process_protocol): which rows' info had each key ("info_mask:<key>";
        # a C++ env's every row has every key), and each row's entries without a typed column (an object array
        # "info_extra" of dicts or None)
        self._mask_at = {
            p: tuple(
                (k, self.index[p + "info_mask:" + k]) for k in self.info_keys if p + "info_mask:" + k in self.index
            )
            for p in ("", "final:")
        }
        self.mask_at: tuple[tuple[str, int], ...] = self._mask_at[""]
        self.extra: int | None = self.index.get("info_extra")

    def obs_name(self, key: str) -> str:
        """The engine's name of observation key `key`."""
        return "obs" if self.single_obs else "obs:" + key

    def obs(self, arrays: Sequence[Any], prefix: str = "") -> Any:
        """The observation (an array, or a dict of arrays) out of `arrays`; prefix="final:" reads the final copy."""
        at = self._obs_at[prefix]
        if self._objects:
            return self.present([arrays[i] for _, i in at])
        if self.single_obs:
            return arrays[at[0][1]]
        return {k: arrays[i] for k, i in at}

    def present(self, leaves: Sequence[Any]) -> Any:
        """The observation of its leaves' arrays (in obs_keys order): one array, a dict, or nested dicts
        (obs_paths); a leaf of Python objects as a tuple."""
        if self._objects:
            leaves = [tuple(v) if obj and isinstance(v, np.ndarray) else v for v, obj in zip(leaves, self._objects)]
        if self.single_obs:
            return leaves[0]
        if self.obs_paths is None:
            return dict(zip(self.obs_keys, leaves))
        out: dict[str, Any] = {}
        for key, value in zip(self.obs_keys, leaves):
            node = out
            *parents, last = self.obs_paths[key]
            for p in parents:
                node = node.setdefault(p, {})
            node[last] = value
        return out

    def info(self, arrays: Sequence[Any], prefix: str = "") -> dict[str, Any]:
        """The env's own info arrays (without env_id / elapsed_step / players), by key."""
        return {k: arrays[i] for k, i in self._info_at[prefix]}

    def masks(self, arrays: Sequence[Any], prefix: str = "") -> dict[str, Any]:
        """The info keys' row masks ("_<key>") where the batch has them (Python envs), by mask name."""
        return {"_" + k: arrays[i] for k, i in self._mask_at[prefix]}

    def extra_rows(self, arrays: Sequence[Any], prefix: str = "") -> Any:
        """The object array of each row's info entries without a typed column, or None (C++ envs)."""
        i = self.index.get(prefix + "info_extra")
        return None if i is None else arrays[i]

    def field(self, name: str) -> Field:
        """The output array called `name`."""
        return self.fields[self.index[name]]


def action_list(action_names: Sequence[str], action: Any) -> Any:
    """Convert an action given in one of EnvPool's forms to what the engine takes (an array, or a list of
    arrays in `action_names` order). Values, shapes and dtypes are the engine's to check.

    Forms: an array (single action key); a dict keyed by the action names; EnvPool's full dict, which may also
    carry "env_id" and "players.env_id" (those are taken out by `split_action_dict`)."""
    if not isinstance(action, dict):
        return action
    missing = [n for n in action_names if n not in action]
    extra = [k for k in action if k not in action_names]
    if missing or extra:
        raise ValueError(f"action dict must have the keys {list(action_names)}; missing {missing}, unexpected {extra}")
    if len(action_names) == 1:
        return action[action_names[0]]
    return [action[n] for n in action_names]


_ID_KEYS = ("env_id", "players.env_id")


def split_action_dict(action: Any, env_id: Any) -> tuple[Any, Any]:
    """EnvPool's send/step accept {"env_id": ..., "players.env_id": ..., <action keys>...}: take the ids out.

    Returns (action without the id keys, env_id). "players.env_id" is implied by env_id (each env's players act
    together), so it is dropped; an env_id given both ways must agree."""
    if not isinstance(action, dict) or not any(k in action for k in _ID_KEYS):
        return action, env_id
    action = dict(action)
    given = action.pop("env_id", None)
    action.pop("players.env_id", None)
    if given is not None:
        if env_id is not None and not np.array_equal(np.asarray(given), np.asarray(env_id)):
            raise ValueError("env_id is given both in the action dict and as an argument, with different values")
        env_id = given
    return action, env_id
