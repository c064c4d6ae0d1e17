"""What a Python env's snapshot holds, and how a worker puts it back (process_worker._Worker.get_state/set_states).

In this order of preference:

1. The env's own protocol: the env class (the innermost env, `env.unwrapped`) defines both
   `parallel_pool_get_state(self)`, returning a picklable value, and `parallel_pool_set_state(self, state)`. The
   names carry the package's name because the short ones are taken with other meanings: gymnasium's MujocoEnv has
   `set_state(qpos, qvel)`, gymnasium's mujoco utils `get_state(env, spec)`, gymnasium-robotics' Adroit and
   Meta-World envs `get_env_state()` / `set_env_state(dict)`, dm_control's Physics `get_state()`; a method the
   pool called by one of those names would do something else, or take other arguments.
2. gymnasium's MuJoCo envs (`gymnasium.envs.mujoco.MujocoEnv` subclasses): their whole `mjData` (qpos, qvel, act,
   time, warm start, ctrl, applied forces, contacts and every derived value the next step or its reward reads:
   after a step, xpos is from before the last substep's integration, and Ant's reward reads it) copied into the
   env's own data with `mj_copyData`, and the env's other attributes (its `np_random` among them). The model is
   the one `env_fn` builds: a snapshot of an env that changed its MjModel as it ran is refused at restore.
3. Otherwise the whole env, pickled (cloudpickle), as long as that pickle is its state: an env that gymnasium's
   EzPickle pickles (its constructor's arguments: a restore would be a new env) or that does not pickle is
   refused, naming the env class and the attribute inside it that cannot be captured.

With 1 and 2 the worker builds a fresh env with `env_fn(**kwargs)` at restore and puts the state into it: the
env's `np_random` (gymnasium's generator) and every wrapper's attributes (TimeLimit's elapsed steps,
OrderEnforcing's reset flag, PassiveEnvChecker's flags) are captured beside the env's own state, with references to
the env's parts (its layers, MuJoCo's model and data) kept as references to the fresh env's.
"""

from __future__ import annotations

import io
import pickle
import sys
import zlib
from typing import Any

__all__ = ["GET", "SET", "NoSnapshot", "capture", "is_captured", "restore", "layers"]

GET, SET = "parallel_pool_get_state", "parallel_pool_set_state"
_CAPTURED = "parallel_pool.env-state/1"  # a snapshot's env field that holds a state to put into a fresh env
_MUJOCO_OWN = ("model", "data", "mujoco_renderer")  # a MujocoEnv's parts that the fresh env keeps (data: copied into)
_DEPTH = 12  # how deep the search for an attribute that does not pickle goes


class NoSnapshot(RuntimeError):
    """The env cannot be captured, or a captured state cannot be put back; the message says why."""


def layers(env: Any) -> list[Any]:
    """The env's gymnasium wrappers, outermost first, then the env itself."""
    from gymnasium import Wrapper

    out: list[Any] = []
    while isinstance(env, Wrapper) and len(out) < 100:
        out.append(env)
        env = env.env
    return [*out, env]


def _name(obj: Any) -> str:
    cls, module = type(obj), getattr(type(obj), "__module__", None)
    name = getattr(cls, "__qualname__", cls.__name__)
    return f"{module}.{name}" if module else name


def _way(base: Any) -> str | None:
    """How the innermost env is captured: "protocol", "mujoco", or None (pickled whole)."""
    has = [callable(getattr(type(base), name, None)) for name in (GET, SET)]
    if any(has):
        if not all(has):
            missing = SET if has[0] else GET
            raise NoSnapshot(f"{_name(base)} defines {GET if has[0] else SET} but not {missing}; define both")
        return "protocol"
    mujoco_env = sys.modules.get("gymnasium.envs.mujoco.mujoco_env")  # not imported: not a MuJoCo env
    if mujoco_env is not None and isinstance(base, mujoco_env.MujocoEnv):
        return "mujoco"
    return None


class _Pickler:
    """cloudpickle, where the objects of `refs` (id -> key) are written as references, and where an object that
    EzPickle would pickle as its constructor's arguments is refused (its state would be lost)."""

    def __init__(self, refs: dict[int, Any]):
        import cloudpickle
        from gymnasium.utils import EzPickle

        class Pickler(cloudpickle.Pickler):
            def persistent_id(self, obj: Any) -> Any:
                key = refs.get(id(obj))
                if key is None and isinstance(obj, EzPickle):
                    raise TypeError(f"a {_name(obj)} pickles its constructor's arguments (EzPickle), not its state")
                return key

        self.pickler = Pickler

    def dumps(self, obj: Any) -> bytes:
        f = io.BytesIO()
        self.pickler(f, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
        return f.getvalue()


def _loads(data: bytes, parts: dict[Any, Any]) -> Any:
    class Unpickler(pickle.Unpickler):
        def persistent_load(self, key: Any) -> Any:
            if key not in parts:
                raise pickle.UnpicklingError(f"a reference to {key!r}, which this env does not have")
            return parts[key]

    return Unpickler(io.BytesIO(data)).load()


def _parts(chain: list[Any], way: str | None) -> dict[Any, Any]:
    """The objects a captured state refers to rather than holds: the env's layers (and MuJoCo's model, data and
    renderer), by key."""
    parts: dict[Any, Any] = {("layer", i): layer for i, layer in enumerate(chain)}
    if way == "mujoco":
        parts.update({("mujoco", a): getattr(chain[-1], a) for a in _MUJOCO_OWN if hasattr(chain[-1], a)})
    return parts


def _attributes(chain: list[Any], way: str | None) -> list[dict[str, Any]]:
    """Each layer's attributes that the state holds: a wrapper's all but its inner env; the innermost env's all but
    its MuJoCo parts (mujoco), or only gymnasium's generator (protocol: the env's value holds the rest)."""
    out = [{k: v for k, v in vars(w).items() if k != "env"} for w in chain[:-1]]
    own = vars(chain[-1])
    if way == "protocol":
        out.append({k: own[k] for k in ("_np_random", "_np_random_seed") if k in own})
    else:
        out.append({k: v for k, v in own.items() if k not in _MUJOCO_OWN})
    return out


def _culprit(chain: list[Any], attributes: list[dict[str, Any]], dumps: Any) -> str:
    """Where the state does not pickle: 'Class.attr[key] (a type): why'. The search goes into containers and into
    the objects of the env's own package; an object of another package (a simulator's handle) is named whole,
    its insides being that package's business."""

    def search(obj: Any, path: str, depth: int, package: str) -> str | None:
        try:
            dumps(obj)
            return None
        except Exception as err:
            why = f"{type(err).__name__}: {err}"
        children: list[tuple[str, Any]] = []
        if depth < _DEPTH:
            if isinstance(obj, dict):
                children = [(f"{path}[{k!r}]", v) for k, v in obj.items()]
            elif isinstance(obj, (list, tuple)):
                children = [(f"{path}[{i}]", v) for i, v in enumerate(obj)]
            elif _package(obj) == package and isinstance(getattr(obj, "__dict__", None), dict):
                children = [(f"{path}.{k}", v) for k, v in vars(obj).items()]
        for child_path, child in children:
            found = search(child, child_path, depth + 1, package)
            if found:
                return found
        return f"{path} (a {_name(obj)}) cannot be pickled ({why})"

    for layer, attrs in zip(chain, attributes):
        for k, v in attrs.items():
            found = search(v, f"{type(layer).__name__}.{k}", 0, _package(layer))
            if found:
                return found
    return "its state does not pickle"


def _package(obj: Any) -> str:
    return str(getattr(type(obj), "__module__", "")).partition(".")[0]


def capture(env: Any) -> bytes:
    """The env's field of a snapshot: the env cloudpickled, or (protocol, MuJoCo) a pickled record of its state to
    put into a fresh env. NoSnapshot says why an env cannot be captured."""
    import cloudpickle
    from gymnasium.utils import EzPickle

    chain = layers(env)
    base = chain[-1]
    way = _way(base)
    if way is None:
        ez = next((layer for layer in chain if isinstance(layer, EzPickle)), None)
        if ez is not None:  # its pickle is its constructor's arguments: say what in its state stops a real one
            where = _culprit([ez], _attributes([ez], None), _Pickler({id(ez): ("layer", 0)}).dumps)
            raise NoSnapshot(
                f"{_name(ez)} pickles its constructor's arguments (gymnasium's EzPickle), not its state, so a "
                f"restore would be a new env; {where}. Define {GET}() and {SET}(state) on the env class to give "
                "it snapshots"
            )
        try:
            return cloudpickle.dumps(env)
        except Exception:
            where = _culprit(chain, _attributes(chain, None), cloudpickle.dumps)
            raise NoSnapshot(f"{_name(base)} cannot be pickled: {where}; define {GET}() and {SET}(state)") from None
    parts = _parts(chain, way)
    pickler = _Pickler({id(obj): key for key, obj in parts.items()})
    attributes = _attributes(chain, way)
    try:
        own = base.parallel_pool_get_state() if way == "protocol" else zlib.compress(pickle.dumps(base.data), 1)
    except Exception as err:
        what = f"{GET}() raised" if way == "protocol" else "data (MjData) does not pickle:"
        raise NoSnapshot(f"{_name(base)}.{what} {type(err).__name__}: {err}") from None
    try:
        state = pickler.dumps((attributes, own if way == "protocol" else None))
    except Exception:
        if way == "protocol":  # the env's own value first: the attributes are the pool's choice
            where = _culprit([base], [{f"{GET}()": own}], pickler.dumps)
            if where.endswith("does not pickle"):
                where = _culprit(chain, attributes, pickler.dumps)
        else:
            where = _culprit(chain, attributes, pickler.dumps)
        raise NoSnapshot(f"{_name(base)}: {where}") from None
    mjdata = own if way == "mujoco" else None
    return pickle.dumps((_CAPTURED, way, [_name(layer) for layer in chain], state, mjdata))


def is_captured(value: Any) -> bool:
    return type(value) is tuple and len(value) == 5 and type(value[0]) is str and value[0] == _CAPTURED


def restore(value: tuple, build: Any) -> Any:
    """A fresh env from `build()` with a captured state (`value`, from capture's record, unpickled) put into it.
    NoSnapshot says why it cannot be (the fresh env is closed then)."""
    _, way, names, state, mjdata = value
    if way not in ("protocol", "mujoco") or type(state) is not bytes or not isinstance(names, list):
        raise NoSnapshot(f"it holds an env state of an unknown kind ({way!r})")
    env = build()
    try:
        _put(env, way, names, state, mjdata)
    except BaseException:
        try:
            env.close()
        except Exception:
            pass
        raise
    return env


def _put(env: Any, way: str, names: list[str], state: bytes, mjdata: Any) -> None:
    chain = layers(env)
    if [_name(layer) for layer in chain] != names:
        raise NoSnapshot(
            f"it holds a {' > '.join(names)}, where this pool's env_fn makes a {' > '.join(map(_name, chain))}"
        )
    if _way(chain[-1]) != way:
        raise NoSnapshot(f"it holds a state captured by way of {way}, which {names[-1]} does not declare")
    base = chain[-1]
    try:
        attributes, own = _loads(state, _parts(chain, way))
    except Exception as err:
        raise NoSnapshot(f"it holds a state that does not unpickle here ({type(err).__name__}: {err})") from None
    if not (isinstance(attributes, list) and len(attributes) == len(chain)):
        raise NoSnapshot("it holds a state of another shape than this env's layers")
    src = None
    if way == "mujoco":
        import mujoco

        try:
            src = pickle.loads(zlib.decompress(mjdata))
        except Exception as err:
            raise NoSnapshot(f"it holds MuJoCo data that does not unpickle ({type(err).__name__}: {err})") from None
        if not isinstance(src, mujoco.MjData) or pickle.dumps(src.model) != pickle.dumps(base.model):
            raise NoSnapshot(
                f"it holds MuJoCo data of another MjModel than the one {names[-1]} builds (an env that changes its "
                f"model as it runs needs {GET}() and {SET}(state) that capture it)"
            )
    for layer, attrs in zip(chain, attributes):
        own_attrs = vars(layer)
        kept = {k: own_attrs[k] for k in ("env", *_MUJOCO_OWN) if k in own_attrs}
        if way == "protocol" and layer is base:
            own_attrs.update(attrs)  # the generator; the env's value sets the rest
            continue
        own_attrs.clear()
        own_attrs.update(attrs)
        own_attrs.update(kept)
    if way == "mujoco":
        import mujoco

        mujoco.mj_copyData(base.data, base.model, src)
    else:
        try:
            getattr(base, SET)(own)
        except Exception as err:
            raise NoSnapshot(f"{names[-1]}.{SET}(state) raised {type(err).__name__}: {err}") from None
