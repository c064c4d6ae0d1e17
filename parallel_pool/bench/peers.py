"""The peers' equivalent of one of our task ids: the one place that builds the env another library runs for a
side-by-side measurement (the benchmark's contenders and `parallel-pool demo` both come here).

Our ids are EnvPool's. gymnasium spells some differently: Atari games are `ALE/<Name>-v5` (registered by ale_py)
with the preprocessing EnvPool does built in, ViZDoom scenarios are `Vizdoom<Name>-v1` (registered by vizdoom's
gymnasium wrapper), and some toy-text / classic ids exist only at another version (gymnasium 1.x has Taxi-v4, not
Taxi-v3). A gymnasium peer is found in that order: Atari, ViZDoom, the same id, the same name at the newest version
gymnasium has; otherwise there is none (our own envs: Dummy, Corridor, Catch, NChain, ...). DeepMind Control ids
map to dm_control's (domain, task) for its own Python loop.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from typing import Any

_VERSIONED = re.compile(r"^(?P<name>[A-Za-z0-9]+)-v(?P<version>\d+)$")


@dataclass(frozen=True)
class Peer:
    gym_id: str  # the gymnasium id
    atari: bool  # build with EnvPool's Atari preprocessing (make_atari_env)
    note: str  # how it differs from our task, "" when it is the same id
    kwargs: dict[str, Any] = field(default_factory=dict)  # for gymnasium.make (vizdoom's wrapper: frame_skip=4)


def make_atari_env(gym_id: str) -> Any:
    """An `ALE/<Name>-v5` env preprocessed as EnvPool's `<Name>-v5` defaults: no sticky actions, 4-frame skip with
    max-pooling, up to 30 no-ops, 84x84 grayscale, 4 stacked frames, 108000 frames per episode, no reward clipping,
    no episodic life (gymnasium has no fire-reset wrapper; EnvPool presses FIRE after reset)."""
    import ale_py
    import gymnasium as gym
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

    gym.register_envs(ale_py)
    env = gym.make(
        gym_id, frameskip=1, repeat_action_probability=0.0, full_action_space=False, max_num_frames_per_episode=108000
    )
    env = AtariPreprocessing(
        env, noop_max=30, frame_skip=4, screen_size=84, terminal_on_life_loss=False, grayscale_obs=True, scale_obs=False
    )
    return FrameStackObservation(env, 4)


# our Atari config key -> AtariVectorEnv's argument of the same meaning (max_episode_steps is in agent steps, ALE
# counts emulator frames: see atari_vector_kwargs)
_ALE_VECTOR_ARGS = {
    "num_envs": "num_envs",
    "batch_size": "batch_size",
    "num_threads": "num_threads",
    "thread_affinity_offset": "thread_affinity_offset",
    "repeat_action_probability": "repeat_action_probability",
    "full_action_space": "full_action_space",
    "img_height": "img_height",
    "img_width": "img_width",
    "gray_scale": "grayscale",
    "stack_num": "stack_num",
    "frame_skip": "frameskip",
    "noop_max": "noop_max",
    "episodic_life": "episodic_life",
    "reward_clip": "reward_clipping",
    "use_fire_reset": "use_fire_reset",
}
# settings AtariVectorEnv has no argument for, with the only value it runs (it resizes with area interpolation, as
# ours does by default; it plays the game's default mode and difficulty)
_ALE_VECTOR_FIXED = {"use_inter_area_resize": True, "mode": -1, "difficulty": -1}


def atari_vector_kwargs(task_id: str, **config: Any) -> dict[str, Any]:
    """AtariVectorEnv's arguments for our Atari id with `config` (make()'s keys: num_envs, batch_size, num_threads,
    ...): the same game and preprocessing, read from our spec, so the two cannot drift apart. A setting it cannot
    express raises ValueError naming the key."""
    import parallel_pool

    c = parallel_pool.make_spec(task_id, **config).config_dict
    for key, only in _ALE_VECTOR_FIXED.items():
        if c[key] != only:
            raise ValueError(f"ale_py's AtariVectorEnv cannot run {key}={c[key]!r} (only {only!r})")
    kwargs = {theirs: c[ours] for ours, theirs in _ALE_VECTOR_ARGS.items()}
    kwargs["max_num_frames_per_episode"] = c["max_episode_steps"] * c["frame_skip"]
    kwargs["maxpool"] = True  # ours max-pools the last two frames of a skip, always
    return {"game": c["task"], **kwargs}


def make_atari_vector_env(task_id: str, **config: Any) -> Any:
    """ale_py's AtariVectorEnv (ALE's own C++ batched env) for our Atari id, preprocessed as our env with `config`
    (see atari_vector_kwargs). What it cannot match: at reset it fills the frame stack with zero frames where ours
    (and EnvPool) repeat the first frame; its info dict has its own keys."""
    from ale_py.vector_env import AtariVectorEnv

    kwargs = atari_vector_kwargs(task_id, **config)
    return AtariVectorEnv(kwargs.pop("game"), **kwargs)


# the game variables our ViZDoom env adds to every game (core/envs/vizdoom/vizdoom_env.h, InfoVariables)
_DOOM_INFO_VARIABLES = (
    "AMMO2 AMMO3 AMMO4 AMMO5 AMMO6 AMMO7 ARMOR DAMAGECOUNT DEATHCOUNT FRAGCOUNT HEALTH HITCOUNT KILLCOUNT "
    "SELECTED_WEAPON SELECTED_WEAPON_AMMO USER2"
).split()


def make_doom_game(task_id: str, doom_config_dir: str, seed: int = 0, **config: Any) -> Any:
    """vizdoom's own DoomGame set up as our single-player ViZDoom env sets up its engine (the scenario's cfg and wad,
    its map, 320x240 at the least, hidden window, PLAYER mode, the episode timeout of our max_episode_steps, the
    game variables our info reads), not yet started (`init()`). The engine writes its settings file
    (_vizdoom.ini) into `doom_config_dir`."""
    import os

    import vizdoom

    import parallel_pool

    c = parallel_pool.make_spec(task_id, **config).config_dict
    if c["max_num_players"] > 1 or c["num_bots"] > 0:
        raise ValueError(f"{task_id}: a game with several players or bots is no single-game loop")
    game = vizdoom.DoomGame()
    game.set_vizdoom_path(c["vzd_path"])
    game.set_doom_game_path(c["iwad_path"])
    if c["cfg_path"]:
        game.load_config(c["cfg_path"])
    if game.get_screen_width() < 320:
        game.set_screen_resolution(vizdoom.ScreenResolution.RES_320X240)
    game.set_window_visible(False)
    game.set_doom_config_path(os.path.join(doom_config_dir, "_vizdoom.ini"))
    game.add_game_args(c["game_args"])
    game.set_mode(vizdoom.Mode.PLAYER)
    game.set_episode_timeout((c["max_episode_steps"] + 1) * c["frame_skip"])
    if c["wad_path"]:
        game.set_doom_scenario_path(c["wad_path"])
    game.set_seed(seed)
    game.set_doom_map(c["map_id"])
    for name in _DOOM_INFO_VARIABLES:
        game.add_available_game_variable(getattr(vizdoom.GameVariable, name))
    return game


def make_env(peer: Peer) -> Any:
    """One gymnasium env for `peer` (module level: picklable for AsyncVectorEnv)."""
    warnings.filterwarnings("ignore")
    if peer.atari:
        return make_atari_env(peer.gym_id)
    import gymnasium as gym

    if peer.gym_id.startswith("Vizdoom"):
        import vizdoom.gymnasium_wrapper  # noqa: F401  (registers the Vizdoom*-v1 ids in this process)
    return gym.make(peer.gym_id, **peer.kwargs)


def _gym_registry() -> dict:
    import gymnasium as gym

    return gym.envs.registration.registry


def gymnasium_peer(task_id: str) -> tuple[Peer | None, str]:
    """(the peer, or None; why there is none or how the peer differs)."""
    from parallel_pool.registry import env_class_of, has_task

    if not has_task(task_id):  # a gymnasium id our pool runs as Python envs: its peer is that env itself
        from parallel_pool.python_env import gymnasium_env_spec

        try:
            gym_spec = gymnasium_env_spec(task_id)
        except ImportError as e:
            return None, f"{task_id}: {e}"
        if gym_spec is None:
            return None, f"gymnasium has no {task_id}"
        return Peer(gym_spec.id, False, ""), ""
    registry = _gym_registry()
    kind = env_class_of(task_id)
    if kind == "Atari":
        gym_id = f"ALE/{task_id}"
        try:
            import ale_py
            import gymnasium as gym

            gym.register_envs(ale_py)
        except ImportError:
            return None, "ale-py is not installed (pip install ale-py)"
        if gym_id not in registry:
            return None, f"ale_py registers no {gym_id}"
        return Peer(gym_id, True, f"{gym_id} with EnvPool's preprocessing wrappers"), ""
    if kind == "Vizdoom":
        try:
            import vizdoom.gymnasium_wrapper  # noqa: F401
        except ImportError:
            return None, "vizdoom is not installed (pip install vizdoom)"
        gym_id = f"Vizdoom{task_id}"
        if gym_id not in registry:
            return None, f"vizdoom's gymnasium wrapper registers no {gym_id}"
        return Peer(gym_id, False, f"{gym_id} (vizdoom's gymnasium wrapper, frame skip 4)", {"frame_skip": 4}), ""
    if task_id in registry:
        return Peer(task_id, False, ""), ""
    m = _VERSIONED.match(task_id)
    if m:
        others = sorted(
            (int(o["version"]), o.string) for o in map(_VERSIONED.match, registry) if o and o["name"] == m["name"]
        )
        if others:
            gym_id = others[-1][1]
            return Peer(gym_id, False, f"gymnasium has no {task_id}; compared with {gym_id}"), ""
    return None, f"gymnasium has no {task_id} (nor another version of it)"


def dm_control_task(task_id: str) -> tuple[str, str]:
    """EnvPool's DMC id -> dm_control's (domain, task), from our config (the domain from the engine type)."""
    import parallel_pool

    spec = parallel_pool.make_spec(task_id)
    domain = re.sub(r"(?<!^)(?=[A-Z])", "_", spec.env_class.removeprefix("Dmc")).lower()
    return {"humanoid_c_m_u": "humanoid_CMU"}.get(domain, domain), spec.config_dict["task_name"]


def make_dm_control_env(task_id: str, seed: int = 0) -> Any:
    """dm_control's own env for one of our DMC ids (`suite.load`)."""
    from dm_control import suite

    domain, task = dm_control_task(task_id)
    return suite.load(domain, task, task_kwargs={"random": seed})


# ---- MPE: mpe2 (the package our C++ MPE family is aligned with), for the mpe case. Module level: picklable for
# the worker processes of AsyncVectorEnv and SuperSuit.


def mpe2_parallel_env(task_id: str) -> Any:
    """mpe2's PettingZoo ParallelEnv of one of our MPE ids ("MPE/simple_spread-v3": `mpe2.simple_spread_v3`), with
    mpe2's defaults (as our ids have them)."""
    import importlib

    name = task_id.removeprefix("MPE/").replace("-v", "_v")
    return importlib.import_module(f"mpe2.{name}").parallel_env()


def mpe2_joint_env(task_id: str) -> Any:
    """One mpe2 env as a gymnasium.Env, what gymnasium's vector envs can step: observations stacked one row per
    agent, one action per agent (MultiDiscrete), the agents' rewards summed, the episode over when every agent's is
    (mpe2's agents end together). The agents-as-rows equivalent of a PettingZoo env for AsyncVectorEnv."""
    import gymnasium as gym
    import numpy as np

    class JointAgents(gym.Env):
        def __init__(self) -> None:
            self.env = mpe2_parallel_env(task_id)
            self.agents = list(self.env.possible_agents)
            obs, act = self.env.observation_space(self.agents[0]), self.env.action_space(self.agents[0])
            k = len(self.agents)
            self.observation_space = gym.spaces.Box(-np.inf, np.inf, (k,) + obs.shape, obs.dtype)
            self.action_space = gym.spaces.MultiDiscrete([act.n] * k)

        def reset(self, *, seed: Any = None, options: Any = None) -> Any:
            obs, _ = self.env.reset(seed=seed)
            return np.stack([obs[a] for a in self.agents]), {}

        def step(self, action: Any) -> Any:
            obs, rew, term, trunc, _ = self.env.step({a: int(action[j]) for j, a in enumerate(self.agents)})
            stacked = np.stack([obs[a] for a in self.agents])
            return stacked, float(sum(rew.values())), all(term.values()), any(trunc.values()), {}

    return JointAgents()


# ---- envs written in Python (the python-envs case): one builder each, used by our pool (env_fn=) and by the
# gymnasium vectorizers alike. Module level: picklable for the worker processes.


def _spin_env(cost: float) -> Any:
    """A pure-Python env whose step spins `cost` seconds of CPU (no sleep: it needs a core, as a real env does)."""
    import time

    import gymnasium as gym
    import numpy as np

    class Spin(gym.Env):
        observation_space = gym.spaces.Box(-1, 1, (4,), np.float32)
        action_space = gym.spaces.Discrete(2)

        def reset(self, *, seed: Any = None, options: Any = None) -> Any:
            super().reset(seed=seed)
            return np.zeros(4, np.float32), {}

        def step(self, action: Any) -> Any:
            end = time.perf_counter() + cost
            while time.perf_counter() < end:
                pass
            return np.zeros(4, np.float32), 0.0, False, False, {}

    return Spin()


def _lunar() -> Any:
    import gymnasium as gym

    return gym.make("LunarLander-v3")


def _minigrid() -> Any:
    import gymnasium as gym
    import minigrid  # noqa: F401  (registers the ids)
    from minigrid.wrappers import ImgObsWrapper

    return ImgObsWrapper(gym.make("MiniGrid-DoorKey-8x8-v0"))  # the image: what every vectorizer can batch


def _minigrid_mission() -> Any:
    import gymnasium as gym
    import minigrid  # noqa: F401  (registers the ids)

    return gym.make("MiniGrid-DoorKey-8x8-v0")  # as users make it: image, direction and the mission's Text


def _spin() -> Any:
    return _spin_env(1e-3)


def _null() -> Any:
    return _spin_env(0.0)


# name -> (builder, what it is)
# the Python envs whose observation AsyncVectorEnv cannot keep in shared memory (a Text leaf): it pickles them
PICKLED_OBS = {"minigrid-mission"}
PYTHON_ENVS: dict[str, tuple[Any, str]] = {
    "lunar": (_lunar, "LunarLander-v3"),
    "minigrid": (_minigrid, "MiniGrid-DoorKey-8x8-v0 (ImgObsWrapper)"),
    "minigrid-mission": (_minigrid_mission, "MiniGrid-DoorKey-8x8-v0 (Dict: image, direction, mission)"),
    "spin": (_spin, "a pure-Python env spinning 1 ms per step"),
    "null": (_null, "a pure-Python env that does nothing"),
}
