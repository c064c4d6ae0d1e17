"""parallel_pool.envpool, EnvPool's face: its specs, spaces, config and info keys equal EnvPool 1.2.5's (the real
package, imported here) for ids of every family, up to the differences docs/migration.md lists; EnvPool's example
programs (examples/make_env.py, env_step.py, xla_step.py, sb3_examples/ppo.py), written here as short equivalents
making the same calls in the same order; the legacy gym 4-tuple API; and the main API left as it was."""

from __future__ import annotations

import warnings

import dm_env
import gymnasium
import numpy as np
import pytest

import parallel_pool
import parallel_pool.envpool as face
from parallel_pool.envpool.python.protocol import DMEnvPool, EnvPool, GymnasiumEnvPool

# ---- specs, spaces, config, info keys against EnvPool 1.2.5 -------------------------------------------------------

SAMPLE = [
    "CartPole-v1",
    "Pendulum-v1",
    "MountainCarContinuous-v0",
    "Acrobot-v1",
    "phys2d/CartPole-v1",
    "Taxi-v3",
    "Blackjack-v1",
    "Catch-v0",
    "FrozenLake-v1",
    "CliffWalking-v0",
    "NChain-v0",
    "Ant-v4",
    "HalfCheetah-v4",
    "Hopper-v5",
    "Reacher-v5",
    "CheetahRun-v1",
    "HumanoidCMURun-v1",
    "FishSwim-v1",
    "LqrLqr21-v1",
    "Pong-v5",
    "Breakout-v5",
    "D1Basic-v1",
]

# The differences docs/migration.md lists ("Specs"), per id; anything else is a defect
_ATARI = {"obs_spec:terminated"}  # EnvPool declares info:terminated in [0, 1] (a DiscreteArray); ours is int32
KNOWN: dict[str, set[str]] = {
    "phys2d/CartPole-v1": {"space:observation", "obs_spec:obs"},  # EnvPool bounds its obs; our phys2d envs declare none
    "Ant-v4": {"info+forward_reward", "obs_spec_order", "config:post_constraint"},
    "HalfCheetah-v4": {"obs_spec_order", "config:post_constraint"},
    "Hopper-v5": {
        "config:reward_threshold",
        "info+reward_ctrl",
        "info+reward_forward",
        "info+reward_survive",
        "info+z_distance_from_origin",
    },
    "CheetahRun-v1": {"config-frame_stack"},
    "HumanoidCMURun-v1": {"config-frame_stack"},
    "FishSwim-v1": {"config-frame_stack", "space_order", "obs_spec_order"},
    "LqrLqr21-v1": {"config-frame_stack"},
    "Pong-v5": _ATARI,
    "Breakout-v5": _ATARI,
    # where vizdoom finds its files (the vizdoom wheel here); the reward tables as the text the engine reads
    "D1Basic-v1": {
        "config:vzd_path",
        "config:iwad_path",
        "config:reward_config",
        "config:selected_weapon_reward_config",
    }
    | {"config:delta_button_config"},
}
_PATH_KEYS = {"base_path"}
_F64_REWARD = {"Ant-v4", "CheetahRun-v1"}
_COMMON = ["num_envs", "batch_size", "num_threads", "max_num_players", "thread_affinity_offset", "base_path", "seed"]
_COMMON += [
    "env_seed",
    "gym_reset_return_info",
    "max_episode_steps",
    "reward_threshold",
]  # EnvPool's asset folder; ours has none (data comes from the installed packages)


def _bound(value):
    """EnvPool writes numeric_limits::min() (the smallest positive float) as the lower bound of an unbounded float;
    read it, and its max(), as the -inf/inf they stand for (ours gives -inf/inf)."""
    v = np.asarray(value)
    if v.dtype.kind != "f":
        return v.tolist()
    v = v.astype(np.float64)
    for t in (np.float64, np.float32):
        v = np.where(v == float(np.finfo(t).tiny), -np.inf, np.where(v == float(np.finfo(t).max), np.inf, v))
    return v.tolist()


def _space(s):
    if isinstance(s, gymnasium.spaces.Dict):
        return {k: _space(v) for k, v in s.spaces.items()}
    if isinstance(s, gymnasium.spaces.Discrete):
        return ("Discrete", int(s.n), int(s.start), s.dtype)
    return (type(s).__name__, s.shape, s.dtype, _bound(s.low), _bound(s.high))


def _dm(s):
    if isinstance(s, tuple) and hasattr(s, "_fields"):
        return {f: _dm(getattr(s, f)) for f in s._fields}
    if isinstance(s, dm_env.specs.DiscreteArray):
        return ("DiscreteArray", s.num_values, s.dtype, s.name)
    return (type(s).__name__, tuple(s.shape), s.dtype, s.name, _bound(s.minimum), _bound(s.maximum))


def _differences(task: str, theirs, ours) -> set[str]:
    out = set()
    for what in ("observation_space", "action_space"):
        a, b = _space(getattr(theirs, what)), _space(getattr(ours, what))
        if isinstance(a, dict) and isinstance(b, dict) and a == b and list(a) != list(b):
            out.add("space_order")
        elif a != b:
            out.add("space:" + what.split("_")[0])
    a, b = _dm(theirs.observation_spec()), _dm(ours.observation_spec())
    out |= {"info+" + k for k in set(b) - set(a)} | {"info-" + k for k in set(a) - set(b)}
    out |= {"obs_spec:" + k for k in set(a) & set(b) if a[k] != b[k]}
    if [k for k in a if k in b] != [k for k in b if k in a]:
        out.add("obs_spec_order")
    if _dm(theirs.action_spec()) != _dm(ours.action_spec()):
        out.add("action_spec")
    ek, ok = list(theirs.config._fields), list(ours.config._fields)
    out |= {"config-" + k for k in ek if k not in ok}
    common = [k for k in _COMMON if k in ek]  # EnvPool's common keys lead, in its order (task keys: ours)
    if ok[: len(common)] != common:
        out.add("config_order")
    for k in set(ek) & set(ok) - _PATH_KEYS:
        if str(getattr(theirs.config, k)) != str(getattr(ours.config, k)):
            out.add("config:" + k)
    if type(theirs).__name__ != type(ours).__name__:
        out.add("class_name")
    return out


@pytest.fixture(scope="module")
def envpool():
    warnings.filterwarnings("ignore", module="glfw")
    return pytest.importorskip("envpool")


@pytest.mark.parametrize("task", SAMPLE)
def test_spec_equals_envpools(envpool, task):
    """Spaces (single-env, Dict key order), dm specs (EnvPool's State: env_id, players, obs, info keys; bounds),
    config keys in EnvPool's order with EnvPool's values, the spec's class name: as EnvPool 1.2.5 gives them, but for
    the differences listed in KNOWN (and docs/migration.md)."""
    assert _differences(task, envpool.make_spec(task), face.make_spec(task)) == KNOWN.get(task, set())


def test_spec_repr_as_envpools(envpool):
    """`print(spec)` / repr: EnvPool's `<Family>EnvSpec(key=value, ...)`; the common keys read the same."""
    ours, theirs = repr(face.make_spec("CartPole-v1", num_envs=4)), repr(envpool.make_spec("CartPole-v1", num_envs=4))
    common = "num_envs=4, batch_size=4, num_threads=0, max_num_players=1, thread_affinity_offset=-1"
    assert ours.startswith("CartPoleEnvSpec(" + common) and theirs.startswith("CartPoleEnvSpec(" + common)
    assert ", seed=42, env_seed=[], gym_reset_return_info=True, max_episode_steps=500, reward_threshold=475.0" in ours
    assert ", seed=42, env_seed=[], gym_reset_return_info=True, max_episode_steps=500, reward_threshold=475.0" in theirs


@pytest.mark.parametrize("task", ["CartPole-v1", "Taxi-v3", "Ant-v4", "CheetahRun-v1", "Pong-v5"])
@pytest.mark.parametrize("env_type", ["gymnasium", "dm"])
def test_pool_results_as_envpools(envpool, task, env_type):
    """The same class name, repr prefix, spaces, info keys / State fields and result shapes after reset and a step."""
    theirs = envpool.make(task, env_type=env_type, num_envs=2)
    ours = face.make(task, env_type=env_type, num_envs=2)
    assert type(ours).__name__ == type(theirs).__name__
    assert repr(ours).split(", base_path=")[0] == repr(theirs).split(", base_path=")[0]
    assert len(ours) == len(theirs) == 2
    np.testing.assert_array_equal(ours.all_env_ids, theirs.all_env_ids)
    assert ours.all_env_ids.dtype == theirs.all_env_ids.dtype == np.int32
    extra = {k.split("+")[1] for k in KNOWN.get(task, set()) if k.startswith("info+")}
    if env_type == "dm":
        assert _dm(ours.observation_spec()).keys() - extra == _dm(theirs.observation_spec()).keys()
        act = np.zeros((2, *ours.action_spec().shape), ours.action_spec().dtype)
        for a, b in [(theirs.reset(), ours.reset()), (theirs.step(act), ours.step(act))]:
            assert type(b.observation).__name__ == "State"
            assert set(b.observation._fields) - extra == set(a.observation._fields)
            for f in a.observation._fields:
                assert np.shape(getattr(b.observation, f)) == np.shape(getattr(a.observation, f)), f
            assert b.step_type.dtype == a.step_type.dtype and b.discount.dtype == a.discount.dtype
        return
    assert _space(ours.observation_space) == _space(theirs.observation_space)
    assert ours.single_observation_space == ours.observation_space and ours.num_envs == theirs.num_envs == 2
    assert ours.is_vector_env is theirs.is_vector_env is True
    (obs_t, info_t), (obs_o, info_o) = theirs.reset(), ours.reset()
    assert info_o.keys() - extra == info_t.keys() and np.shape(obs_o) == np.shape(obs_t)
    act = np.stack([ours.action_space.sample() for _ in range(2)])
    rt, ro = theirs.step(act), ours.step(act)
    assert len(ro) == len(rt) == 5 and ro[4].keys() - extra == rt[4].keys()
    assert ro[4]["players"].keys() == rt[4]["players"].keys() == {"env_id"}
    for i, (a, b) in enumerate(zip(rt[:4], ro[:4])):
        assert np.shape(a) == np.shape(b)
        # MuJoCo rewards: float64 here (gymnasium's and dm_control's values), float32 in EnvPool
        assert np.asarray(b).dtype == (np.float64 if i == 1 and task in _F64_REWARD else np.asarray(a).dtype)
    assert isinstance(ours, gymnasium.vector.VectorEnv) and isinstance(ours, gymnasium.Env)
    theirs.close()
    ours.close()


def test_render_defaults_to_env_0_as_envpool(envpool):
    """render(): EnvPool renders its render_env_id (0) unless env_ids says which; frames as EnvPool's."""
    theirs = envpool.make_gymnasium("CartPole-v1", num_envs=3, render_mode="rgb_array")
    ours = face.make_gymnasium("CartPole-v1", num_envs=3, render_mode="rgb_array")
    theirs.reset()
    ours.reset()
    for kw in ({}, {"env_ids": [0, 2]}, {"env_ids": 1}):
        a, b = theirs.render(**kw), ours.render(**kw)
        assert a.shape == b.shape and a.dtype == b.dtype == np.uint8, kw
    assert (
        face.make_gymnasium("CartPole-v1", num_envs=3, render_mode="rgb_array", render_env_id=2).render().shape[0] == 1
    )


def test_info_keys_of_async_recv_as_envpools(envpool):
    """send/recv in an async pool; recv(reset=True) returns (obs, info) as EnvPool's."""
    for m in (envpool, face):
        env = m.make_gymnasium("CartPole-v1", num_envs=4, batch_size=2)
        env.async_reset()
        obs, info = env.recv(reset=True)
        assert obs.shape == (2, 4) and set(info) == {"env_id", "players", "elapsed_step"}
        env.send(np.zeros(2, np.int32), info["env_id"])
        assert len(env.recv()) == 5


# ---- the face's own contract --------------------------------------------------------------------------------------


def test_types_at_envpools_paths():
    """EnvPool's names, at EnvPool's module paths, work in isinstance checks on the face's pools and specs."""
    from parallel_pool.envpool.python import api, protocol

    gym_pool, dm_pool = face.make_gymnasium("CartPole-v1"), face.make_dm("CartPole-v1")
    assert (
        isinstance(gym_pool, EnvPool) and isinstance(gym_pool, GymnasiumEnvPool) and isinstance(gym_pool, api.EnvPool)
    )
    assert isinstance(dm_pool, EnvPool) and isinstance(dm_pool, DMEnvPool) and not isinstance(dm_pool, GymnasiumEnvPool)
    assert isinstance(dm_pool, dm_env.Environment)
    assert isinstance(face.make_spec("CartPole-v1"), protocol.EnvSpec) and face.EnvSpec is protocol.EnvSpec
    assert isinstance(face.make_gym("CartPole-v1", legacy_gym=False), GymnasiumEnvPool)


def test_envpool_program_conventions():
    """What EnvPool programs do to a pool: CleanRL sets num_envs and single_* spaces, SB3's example sets spec.id,
    both read spec.config.<key>; the spaces stay one env's."""
    envs = face.make("Pong-v5", env_type="gym", num_envs=2, episodic_life=True, reward_clip=True, seed=1)
    envs.num_envs = 2
    envs.single_action_space = envs.action_space
    envs.single_observation_space = envs.observation_space
    assert envs.is_vector_env and envs.observation_space.shape == (4, 84, 84) and envs.action_space.n == 6
    envs.spec.id = "Pong-v5-renamed"
    assert envs.spec.id == "Pong-v5-renamed"
    assert envs.spec.config.num_envs == 2 and envs.spec.config.episodic_life is True and envs.config["seed"] == 1
    obs, _ = envs.reset()
    assert obs.shape == (2, 4, 84, 84)


def test_main_api_keeps_gymnasiums_batched_spaces():
    """parallel_pool.make is unchanged: gymnasium's batched spaces, `_key` info masks."""
    env = parallel_pool.make("CartPole-v1", num_envs=3)
    assert env.observation_space.shape == (3, 4) and env.single_observation_space.shape == (4,)
    assert "_env_id" in env.reset()[1]


def test_envpool_seed_list_seeds_each_env():
    """EnvPool's seed=[s0, s1, ...] (or env_seed=) gives env i the seed s_i: here env i's first reset equals a pool
    seeded so that env 0 gets s_i."""
    obs, _ = face.make_gymnasium("CartPole-v1", num_envs=2, seed=[7, 3]).reset()
    for i, s in enumerate([7, 3]):
        np.testing.assert_array_equal(obs[i], face.make_gymnasium("CartPole-v1", seed=s).reset()[0][0])
    assert face.make_spec("CartPole-v1", num_envs=2, env_seed=[7, 3]).config.env_seed == [7, 3]
    with pytest.raises(ValueError, match="one seed per env"):
        face.make_spec("CartPole-v1", num_envs=2, env_seed=[1])
    with pytest.raises(ValueError, match=">= 0"):
        face.make_spec("CartPole-v1", num_envs=2, seed=[1, -1])


def test_bad_input_raises_clearly():
    with pytest.raises(ValueError, match="env_type"):
        face.make("CartPole-v1", env_type="gymnax")
    with pytest.raises(ValueError, match="legacy_gym"):
        face.make("CartPole-v1", env_type="dm", legacy_gym=True)
    with pytest.raises(ValueError, match="gym_reset_return_info"):
        face.make_gymnasium("CartPole-v1", gym_reset_return_info=False)
    with pytest.raises(ValueError, match="camera_id"):
        face.make_gymnasium("CartPole-v1", render_mode="rgb_array").render(camera_id=1)
    with pytest.raises(ValueError, match="did you mean"):
        face.make_gymnasium("CartPol-v1")


# ---- EnvPool's examples (sail-sg/envpool examples/), the same calls in the same order, budgets shortened -------


def test_example_make_env():
    """examples/make_env.py: make by env_type and by make_*, print, the same str; make_spec's spaces and specs;
    an Ant-v4 step of one env has no qpos0/qvel0 info."""
    env_dm, env_dm0 = face.make("Pong-v5", env_type="dm"), face.make_dm("Pong-v5")
    env_gym, env_gym0 = face.make("Pong-v5", env_type="gym"), face.make_gym("Pong-v5")
    assert str(env_dm) == str(env_dm0) and str(env_gym) == str(env_gym0)
    assert str(face.make_gym("Pong-v5", num_envs=4)).startswith("AtariGymnasiumEnvPool(num_envs=4,")
    spec = face.make_spec("Pong-v5", num_envs=4)
    assert str(spec).startswith("AtariEnvSpec(num_envs=4,")
    np.testing.assert_allclose(spec.observation_space.high, 255)
    assert spec.action_space.n == 6
    np.testing.assert_allclose(spec.observation_spec().obs.maximum, 255)
    assert spec.action_spec().num_values == 6
    env = face.make_gym("Ant-v4")
    info = env.step(np.array([env.action_space.sample()]), np.array([0]))[-1]
    assert "qpos0" not in info and "qvel0" not in info


def test_example_env_step():
    """examples/env_step.py (100 steps instead of 1000): gym sync with env_id subsets, dm sync, async dm/gym and the
    low-level send/recv."""
    env = face.make_gym("Pong-v5", num_envs=4)
    action_num = env.action_space.n
    obs, _ = env.reset()
    assert obs.shape == (4, 4, 84, 84)
    for _ in range(100):
        obs, rew, term, trunc, info = env.step(np.random.randint(action_num, size=4))
    obs, _ = env.reset(np.array([1, 3]))
    assert obs.shape == (2, 4, 84, 84)
    result = env.step(np.array([0, 0, 2]), np.array([3, 2, 0]))
    np.testing.assert_allclose(result[-1]["env_id"], [3, 2, 0])
    assert result[0].shape == (3, 4, 84, 84)

    env = face.make_dm("Pong-v5", num_envs=4)
    action_num = env.action_spec().num_values
    ts = env.reset()
    for _ in range(100):
        ts = env.step(np.random.randint(action_num, size=4))
    assert env.reset(np.array([1, 3])).observation.obs.shape == (2, 4, 84, 84)
    ts = env.step(np.array([0, 0, 2]), np.array([3, 2, 0]))
    np.testing.assert_allclose(ts.observation.env_id, [3, 2, 0])

    env = face.make_dm("Pong-v5", num_envs=8, batch_size=4)
    ts = env.reset()
    for _ in range(100):
        assert len(ts.observation.env_id) == 4
        ts = env.step(np.random.randint(action_num, size=4), ts.observation.env_id)
    env = face.make_gym("Pong-v5", num_envs=8, batch_size=4)
    obs, info = env.reset()
    assert obs.shape == (4, 4, 84, 84)
    for _ in range(100):
        obs, info = (r := env.step(np.random.randint(action_num, size=4), info["env_id"]))[0], r[-1]
        assert len(info["env_id"]) == 4 and obs.shape == (4, 4, 84, 84)
    env = face.make_gym("Pong-v5", num_envs=8, batch_size=4)
    env.async_reset()
    for _ in range(100):
        result = env.recv()
        assert len(result[-1]["env_id"]) == 4 and result[0].shape == (4, 4, 84, 84)
        env.send(np.random.randint(action_num, size=4), result[-1]["env_id"])


def test_example_xla_step():
    """examples/xla_step.py: xla() in a jitted fori_loop for gym sync, dm sync and async send/recv; the step's
    result is EnvPool's (obs, reward, terminated, truncated, info) / TimeStep."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    def policy(states):
        return jnp.zeros(states.shape[0], dtype=jnp.int32)

    env = face.make_gym("Pong-v5", num_envs=4)
    handle, recv, send, step = env.xla()
    seen = {}

    def gym_body(i, loop_var):
        handle0, states = loop_var
        handle1, (new_states, rew, term, trunc, info) = step(handle0, policy(states))
        seen["info"] = set(info)
        return handle1, new_states

    states, _ = env.reset()
    _, out = jax.jit(lambda n, v: jax.lax.fori_loop(0, n, gym_body, v), static_argnums=0)(20, (handle, states))
    assert out.shape == (4, 4, 84, 84) and seen["info"] == {"env_id", "players", "elapsed_step", "lives", "reward"} | {
        "terminated",
        "ram",
    }

    env = face.make_dm("Pong-v5", num_envs=4)
    handle, recv, send, step = env.xla()

    def dm_body(i, loop_var):
        handle0, states = loop_var
        return step(handle0, policy(states.observation.obs))

    _, ts = jax.jit(lambda n, v: jax.lax.fori_loop(0, n, dm_body, v), static_argnums=0)(20, (handle, env.reset()))
    assert ts.observation._fields == face.make_spec("Pong-v5").observation_spec()._fields

    env = face.make_dm("Pong-v5", num_envs=8, batch_size=4)
    handle, recv, send, step = env.xla()

    def async_body(i, loop_var):
        handle0, states = loop_var
        handle1 = send(handle0, policy(states.observation.obs), states.observation.env_id)
        return recv(handle1)

    env.async_reset()
    handle, states = recv(handle)
    _, ts = jax.jit(lambda n, v: jax.lax.fori_loop(0, n, async_body, v), static_argnums=0)(20, (handle, states))
    assert ts.observation.obs.shape == (4, 4, 84, 84)


def test_example_sb3_ppo():
    """examples/sb3_examples/ppo.py (512 steps instead of 100k): its VecAdapter builds SB3's VecEnv from the pool's
    (single-env) observation_space and spec.config.num_envs, resets finished envs by env id; PPO learns, evaluates."""
    sb3 = pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.vec_env import VecEnv, VecMonitor

    class VecAdapter(VecEnv):
        def __init__(self, venv: EnvPool):
            self.venv = venv
            super().__init__(venv.spec.config.num_envs, venv.observation_space, venv.action_space)

        def _infos(self, info, n):
            arrays = {k: v for k, v in info.items() if isinstance(v, np.ndarray)}
            return [{k: v[i] for k, v in arrays.items()} for i in range(n)]

        def step_async(self, actions):
            self.actions = actions

        def reset(self):
            obs, info = self.venv.reset()
            self.reset_infos = self._infos(info, self.num_envs)
            return obs

        def step_wait(self):
            obs, rewards, terms, truncs, info = self.venv.step(self.actions)
            dones = terms | truncs
            infos = self._infos(info, self.num_envs)
            for i in range(self.num_envs):
                if dones[i]:
                    infos[i]["terminal_observation"] = obs[i]
                    reset_obs, reset_info = self.venv.reset(np.array([i]))
                    obs[i] = reset_obs[0]
                    self.reset_infos[i] = self._infos(reset_info, 1)[0]
            return obs, rewards, dones, infos

        def close(self):
            self.venv.close()

        def get_attr(self, name, indices=None):
            return [getattr(self.venv, name) for _ in self._get_indices(indices)]

        def set_attr(self, name, value, indices=None):
            setattr(self.venv, name, value)

        def env_method(self, name, *args, indices=None, **kwargs):
            return [getattr(self.venv, name)(*args, **kwargs) for _ in self._get_indices(indices)]

        def env_is_wrapped(self, wrapper_class, indices=None):
            return [False for _ in self._get_indices(indices)]

    env = face.make("Pendulum-v1", env_type="gymnasium", num_envs=4, seed=0)
    env.spec.id = "Pendulum-v1"
    env = VecMonitor(VecAdapter(env))
    model = sb3.PPO("MlpPolicy", env, n_steps=128, use_sde=True, sde_sample_freq=4, seed=0, verbose=0)
    model.learn(512)
    mean, _ = evaluate_policy(model, env, n_eval_episodes=4)
    assert np.isfinite(mean) and -2000 < mean <= 0


# ---- EnvPool 0.6-0.8's gym API (old clients: CleanRL's envpool scripts) -------------------------------------------


def test_legacy_gym_api_is_envpool_08s():
    """step -> (obs, reward, done, info) with done = terminated | truncated and info["TimeLimit.truncated"];
    reset -> obs; gym_reset_return_info=True -> (obs, info); xla()'s step returns the 4-tuple too."""
    env = face.make_gym("CartPole-v1", num_envs=2, legacy_gym=True, max_episode_steps=3)
    assert type(env).__name__ == "CartPoleGymEnvPool" and isinstance(env, EnvPool)
    assert env.reset().shape == (2, 4)
    for t in range(3):
        obs, rew, done, info = env.step(np.zeros(2, np.int32))
    assert done.tolist() == [True, True] and info["TimeLimit.truncated"].tolist() == [True, True]
    assert info["elapsed_step"].tolist() == [3, 3]
    ref = face.make_gymnasium("CartPole-v1", num_envs=2, max_episode_steps=3)
    ref.reset()
    for t in range(3):
        r = ref.step(np.zeros(2, np.int32))
    np.testing.assert_array_equal(obs, r[0])
    np.testing.assert_array_equal(done, r[2] | r[3])
    obs, info = face.make_gym("CartPole-v1", legacy_gym=True, gym_reset_return_info=True).reset()
    assert obs.shape == (1, 4) and "env_id" in info
    env.async_reset()
    obs, info = env.recv(reset=True)
    assert obs.shape == (2, 4) and info["env_id"].tolist() == [0, 1]
    env.async_reset()
    assert env.recv(reset=True, return_info=False).shape == (2, 4)
    jax = pytest.importorskip("jax")
    handle, recv, send, step = env.xla()
    handle, result = jax.jit(step)(handle, jax.numpy.zeros(2, jax.numpy.int32))
    assert len(result) == 4 and "TimeLimit.truncated" in result[3] and result[2].dtype == bool


def test_legacy_gym_api_is_the_default_only_with_old_gym(monkeypatch):
    """make_gym gives the 4-tuple API when gym < 0.26 is installed (as EnvPool <= 0.8 did), else gymnasium's."""
    import importlib.metadata

    from parallel_pool.envpool import registration

    real = importlib.metadata.version

    def fake(version):
        def v(name):
            if name == "gym":
                if version is None:
                    raise importlib.metadata.PackageNotFoundError(name)
                return version
            return real(name)

        return v

    for version, legacy in [(None, False), ("0.23.1", True), ("0.26.2", False), ("0.21.0", True)]:
        monkeypatch.setattr(importlib.metadata, "version", fake(version))
        assert registration.old_gym_installed() is legacy
        env = face.make_gym("CartPole-v1")
        assert len(env.step(np.zeros(1, np.int32))) == (4 if legacy else 5), version
        assert len(face.make_gymnasium("CartPole-v1").step(np.zeros(1, np.int32))) == 5


def test_face_imports_alone():
    """`import parallel_pool.envpool` in a fresh process, as an EnvPool program does first."""
    from pyproc import run_python

    r = run_python("import parallel_pool.envpool as envpool; print(envpool.make_gym('CartPole-v1'))", timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("CartPoleGymnasiumEnvPool(num_envs=1, batch_size=1,")
