"""Reference for the ViZDoom family: vizdoom's own Python DoomGame, set up as the env sets up its engine (EnvPool's
setup), with EnvPool's observation pipeline (cv2.resize of each channel plane, frame stack) and reward shaping
written out in numpy from EnvPool's description. Used by tests/envs/vizdoom/test_vizdoom.py."""

from __future__ import annotations

import os
import socket
import tempfile
import threading
from collections import deque
from typing import Any

import cv2
import numpy as np
import vizdoom as vzd

INFO_VARIABLES = [
    "AMMO2", "AMMO3", "AMMO4", "AMMO5", "AMMO6", "AMMO7", "ARMOR", "DAMAGECOUNT", "DEATHCOUNT", "FRAGCOUNT",
    "HEALTH", "HITCOUNT", "KILLCOUNT", "SELECTED_WEAPON", "SELECTED_WEAPON_AMMO", "USER2",
]  # fmt: skip

REWARD_CONFIG = {
    "FRAGCOUNT": (1, -1.5), "KILLCOUNT": (1, 0), "DEATHCOUNT": (-0.75, 0.75), "HITCOUNT": (0.01, -0.01),
    "DAMAGECOUNT": (0.003, -0.003), "HEALTH": (0.005, -0.003), "ARMOR": (0.005, -0.001),
    "WEAPON0": (0.02, -0.01), "AMMO0": (0.0002, -0.0001), "WEAPON1": (0.02, -0.01), "AMMO1": (0.0002, -0.0001),
    "WEAPON2": (0.02, -0.01), "AMMO2": (0.0002, -0.0001), "WEAPON3": (0.1, -0.05), "AMMO3": (0.001, -0.0005),
    "WEAPON4": (0.1, -0.05), "AMMO4": (0.001, -0.0005), "WEAPON5": (0.1, -0.05), "AMMO5": (0.001, -0.0005),
    "WEAPON6": (0.2, -0.1), "AMMO6": (0.002, -0.001), "WEAPON7": (0.2, -0.1), "AMMO7": (0.002, -0.001),
}  # fmt: skip
WEAPON_REWARD = [0.0002, 0.0002, 0.0002, 0.001, 0.001, 0.001, 0.002, 0.002, 0.0, 0.0]


class ReferenceDoom:
    """One ViZDoom game driven step by step like the env: same paths, seed, timeout, frame skip and outputs."""

    def __init__(self, config: dict[str, Any], seed: int, game_args: str = "", start: bool = True) -> None:
        self.frame_skip = config["frame_skip"]
        self.size = (config["img_width"], config["img_height"])
        self.stack_num = config["stack_num"]
        self.weapon_duration = config["weapon_duration"]
        game = vzd.DoomGame()
        game.set_vizdoom_path(config["vzd_path"])
        game.set_doom_game_path(config["iwad_path"])
        game.load_config(config["cfg_path"])
        self.native = (game.get_screen_width(), game.get_screen_height())
        if self.native[0] < 320:
            game.set_screen_resolution(vzd.ScreenResolution.RES_320X240)
        game.set_window_visible(False)
        game.set_doom_config_path(os.path.join(tempfile.gettempdir(), "parallel_pool_vizdoom_reference.ini"))
        game.set_mode(vzd.Mode.PLAYER)
        game.set_episode_timeout((config["max_episode_steps"] + 1) * self.frame_skip)
        game.set_doom_scenario_path(config["wad_path"])
        game.set_seed(seed)
        game.set_doom_map(config["map_id"])
        for name in INFO_VARIABLES:
            game.add_available_game_variable(getattr(vzd.GameVariable, name))
        self.vars = [v.name for v in game.get_available_game_variables()]
        if game_args:
            game.add_game_args(game_args)
        if start:  # a player of a network game starts together with the others (see LockstepReference)
            game.init()
        self.game = game
        self.stack: deque[np.ndarray] = deque(maxlen=self.stack_num)
        self.gvs = np.zeros(len(self.vars))
        self.base: dict[str, float] = {}

    def close(self) -> None:
        self.game.close()

    def reset(self) -> tuple[np.ndarray, dict[str, float], float]:
        """The first reset uses the episode init() began (as the env does)."""
        return self._outputs(start=True)

    def new_episode(self) -> tuple[np.ndarray, dict[str, float], float]:
        self.game.new_episode()
        return self._outputs(start=True)

    def step(self, buttons: list[float]) -> tuple[np.ndarray, dict[str, float], float, bool]:
        self.game.set_action(list(buttons))
        self.game.advance_action(self.frame_skip, True)
        finished = self.game.is_episode_finished()
        obs, info, reward = self._outputs(start=False)
        return obs, info, reward, finished

    def _frame(self, screen: np.ndarray) -> np.ndarray:
        planes = screen[None] if screen.ndim == 2 else screen
        interp = cv2.INTER_AREA
        out = []
        for plane in planes:
            if plane.shape[::-1] != self.native:
                plane = cv2.resize(plane, self.native, interpolation=interp)
            out.append(cv2.resize(plane, self.size, interpolation=interp))
        return np.stack(out)

    def _outputs(self, start: bool) -> tuple[np.ndarray, dict[str, float], float]:
        state = self.game.get_state()
        if state is not None:
            gvs = np.array(state.game_variables, dtype=np.float64)
        else:  # episode finished: the env reads the final values from the engine
            gvs = np.array([self.game.get_game_variable(getattr(vzd.GameVariable, v)) for v in self.vars])
        reward = self._reward(gvs, start)
        if state is not None:
            frame = self._frame(state.screen_buffer)
            if start:
                self.stack.extend([frame] * self.stack_num)
            else:
                self.stack.append(frame)
        obs = np.concatenate(list(self.stack))
        info = {name: float(self.gvs[self.vars.index(name)]) if name in self.vars else 0.0 for name in INFO_VARIABLES}
        return obs, info, reward

    def _reward(self, raw: np.ndarray, start: bool) -> float:
        gvs = raw.copy()
        for name in ("HITCOUNT", "DAMAGECOUNT", "DEATHCOUNT"):
            if name in self.vars:
                i = self.vars.index(name)
                if start:
                    self.base[name] = gvs[i]
                gvs[i] -= self.base[name]
        last = gvs.copy() if start else self.gvs.copy()
        if start:
            self.weapon, self.weapon_steps = -1, 0
        reward = np.float32(0.0)
        weapon, ammo = -1, 0.0
        for i, name in enumerate(self.vars):
            delta = gvs[i] - last[i]
            if name == "DAMAGECOUNT":
                delta = min(delta, 200.0)
            elif name == "HITCOUNT":
                delta = min(delta, 5.0)
            elif name == "SELECTED_WEAPON":
                weapon = int(gvs[i])
            elif name == "SELECTED_WEAPON_AMMO":
                ammo = gvs[i]
            elif name == "HEALTH":
                if last[i] < 0 and gvs[i] < 0:
                    last[i] = gvs[i] = 100
                elif gvs[i] < 0:
                    gvs[i] = last[i]
                elif last[i] < 0:
                    last[i] = gvs[i]
                delta = gvs[i] - last[i]
            pos, neg = REWARD_CONFIG.get(name, (0.0, 0.0))
            reward = np.float32(reward + np.float32(delta * pos if delta >= 0 else -delta * neg))
        self.weapon_steps = self.weapon_steps + 1 if weapon == self.weapon else 1
        self.weapon = weapon
        if 0 <= weapon < len(WEAPON_REWARD) and self.weapon_steps >= self.weapon_duration and int(ammo) > 0:
            reward = np.float32(reward + np.float32(WEAPON_REWARD[weapon]))
        self.gvs = gvs
        return float(reward)


def together(calls: list[Any], limit: float = 30.0) -> None:
    """Make the calls concurrently (the engines of one network game block in each tic until all have made it)."""
    errors: list[BaseException] = []

    def run(call: Any) -> None:
        try:
            call()
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=run, args=(c,), daemon=True) for c in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join(limit)
    assert not any(t.is_alive() for t in threads), "the reference's players stalled"
    if errors:
        raise errors[0]


class LockstepReference:
    """Several players of one network game, as vizdoom's own multiplayer examples set it up (player 0 hosts with
    `-host N -port P` and the scenario's rules, the others `-join`), in packet-server mode (`-netmode 1`: peer to
    peer is not reproducible), stepped like the env: every player makes each tic together with the others (a step
    of frame_skip tics at once hangs the netcode)."""

    def __init__(self, config: dict[str, Any], seed: int, players: int) -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        host = f"-host {players} -port {port} -netmode 1 +sv_forcerespawn 1 {config['game_args']}"
        self.players = [
            ReferenceDoom(config, seed, host if p == 0 else f"-join 127.0.0.1:{port}", start=False)
            for p in range(players)
        ]
        together([p.game.init for p in self.players])

    def close(self) -> None:
        for p in self.players:
            p.close()

    def reset(self) -> list[tuple[np.ndarray, dict[str, float], float]]:
        return [p.reset() for p in self.players]

    def step(self, buttons: np.ndarray) -> list[tuple[np.ndarray, dict[str, float], float, bool]]:
        """buttons: one row per player. Assumes the episode does not end within the step."""
        frame_skip = self.players[0].frame_skip
        for p, b in zip(self.players, buttons):
            p.game.set_action(list(b))
        for t in range(frame_skip):
            last = t == frame_skip - 1
            together([lambda g=p.game, u=last: g.advance_action(1, u) for p in self.players])
        return [(*p._outputs(start=False), p.game.is_episode_finished()) for p in self.players]
