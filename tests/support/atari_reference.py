"""A Python reference of the Atari preprocessing (tests only): raw ALE frames from ale_py, processed in numpy.

`area_resize` reproduces OpenCV's INTER_AREA shrink (computeResizeAreaTab + the float32 accumulation order of
ResizeArea_Invoker, rounding half to even), written from OpenCV's documented algorithm; `tests/envs/atari/test_atari.py`
checks it against cv2 itself where opencv is installed.
"""

from __future__ import annotations

import math

import numpy as np


def area_taps(ssize: int, dsize: int):
    scale = 1.0 / (dsize / ssize)
    taps = []
    for dx in range(dsize):
        fsx1 = dx * scale
        fsx2 = fsx1 + scale
        cell = min(scale, ssize - fsx1)
        sx1, sx2 = math.ceil(fsx1), math.floor(fsx2)
        sx2 = min(sx2, ssize - 1)
        sx1 = min(sx1, sx2)
        if sx1 - fsx1 > 1e-3:
            taps.append((dx, sx1 - 1, np.float32((sx1 - fsx1) / cell)))
        for sx in range(sx1, sx2):
            taps.append((dx, sx, np.float32(1.0 / cell)))
        if fsx2 - sx2 > 1e-3:
            taps.append((dx, sx2, np.float32(min(min(fsx2 - sx2, 1.0), cell) / cell)))
    return taps


_TAPS: dict = {}


def area_resize(img: np.ndarray, h: int, w: int) -> np.ndarray:
    """img: (H, W) or (H, W, C) uint8 -> (h, w[, C]) uint8, as cv2.resize(img, (w, h), interpolation=INTER_AREA)."""
    key = (img.shape[0], img.shape[1], h, w)
    if key not in _TAPS:
        _TAPS[key] = (area_taps(img.shape[1], w), area_taps(img.shape[0], h))
    xt, yt = _TAPS[key]
    src = img.astype(np.float32)
    hbuf = np.zeros((img.shape[0], w) + img.shape[2:], dtype=np.float32)
    for di, si, a in xt:  # per output column, taps in order, each a float32 multiply then add
        hbuf[:, di] = hbuf[:, di] + src[:, si] * a
    out = np.zeros((h, w) + img.shape[2:], dtype=np.float32)
    first = set()
    for di, si, b in yt:
        if di not in first:
            out[di] = b * hbuf[si]
            first.add(di)
        else:
            out[di] = out[di] + b * hbuf[si]
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


class ReferenceAtari:
    """Our Atari env's semantics on ale_py.ALEInterface, for a single env, with an explicit no-op count."""

    def __init__(
        self,
        game: str,
        *,
        frame_skip=4,
        stack_num=4,
        img=84,
        gray=True,
        episodic_life=False,
        reward_clip=False,
        fire_reset=True,
        full_action_space=False,
        resize=None,
    ):
        import ale_py
        from ale_py import roms

        self.ale = ale_py.ALEInterface()
        self.ale.setLoggerMode(ale_py.LoggerMode.Error)
        self.ale.setInt("random_seed", 0)
        self.ale.setFloat("repeat_action_probability", 0.0)
        self.ale.loadROM(roms.get_rom_path(game))
        self.actions = self.ale.getLegalActionSet() if full_action_space else self.ale.getMinimalActionSet()
        self.fire = fire_reset and any(a == ale_py.Action.FIRE for a in self.actions)
        self.frame_skip, self.stack_num, self.img, self.gray = frame_skip, stack_num, img, gray
        self.episodic_life, self.reward_clip = episodic_life, reward_clip
        self.resize = resize or area_resize
        self.stack = None
        self.continue_game = False
        self.lives = 0

    def _screen(self):
        return self.ale.getScreenGrayscale() if self.gray else self.ale.getScreenRGB()

    def _push(self, frame, fill):
        f = self.resize(frame, self.img, self.img)
        if not self.gray:  # EnvPool's colour layout: the R, G, B planes of each frame, (3 * stack, H, W)
            f = f.transpose(2, 0, 1)
        if fill or self.stack is None:
            self.stack = [f] * self.stack_num
        else:
            self.stack = self.stack[1:] + [f]
        return np.concatenate(self.stack) if not self.gray else np.stack(self.stack)

    def reset(self, noops: int):
        """noops: the number of reset frames drawn (1..noop_max); FIRE takes the last one when fire reset applies."""
        import ale_py

        new_game = not (self.episodic_life and self.continue_game)
        self.continue_game = False
        if new_game:
            self.ale.reset_game()
        n = max(0, noops - 1) if self.fire else noops
        for _ in range(n):
            self.ale.act(ale_py.Action.NOOP)
            if self.ale.game_over():
                self.ale.reset_game()
                new_game = True
        if self.fire:
            self.ale.act(ale_py.Action.FIRE)
        self.lives = self.ale.lives()
        return self._push(self._screen(), new_game)

    def step(self, action: int):
        a = self.actions[action]
        reward, over, prev, last = 0, False, None, 0
        for i in range(self.frame_skip):
            last = i
            reward += self.ale.act(a)
            over = self.ale.game_over()
            if over:
                break
            if i == self.frame_skip - 2:
                prev = self._screen()
        cur = self._screen()
        if self.frame_skip >= 2 and last == self.frame_skip - 1:
            cur = np.maximum(prev, cur)
        obs = self._push(cur, False)
        lives = self.ale.lives()
        terminated = over
        if self.episodic_life and not over and lives < self.lives and lives > 0:
            terminated = True
            self.continue_game = True
        self.lives = lives
        r = float(np.sign(reward)) if self.reward_clip else float(reward)
        return (
            obs,
            r,
            terminated,
            {"lives": lives, "reward": float(reward), "terminated": int(over), "ram": self.ale.getRAM().copy()},
        )
