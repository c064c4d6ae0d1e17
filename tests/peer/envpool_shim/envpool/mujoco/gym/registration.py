# the v4/v5 subset of EnvPool's list that parallel_pool registers (v2/v3 are not registered)
gym_mujoco_envs = [
    ("Ant", ("v4", "v5"), 1000),
    ("HalfCheetah", ("v4", "v5"), 1000),
    ("Hopper", ("v4", "v5"), 1000),
    ("Humanoid", ("v4", "v5"), 1000),
    ("HumanoidStandup", ("v4", "v5"), 1000),
    ("InvertedDoublePendulum", ("v4", "v5"), 1000),
    ("InvertedPendulum", ("v4", "v5"), 1000),
    ("Pusher", ("v4", "v5"), 100),
    ("Reacher", ("v4", "v5"), 50),
    ("Swimmer", ("v4", "v5"), 1000),
    ("Walker2d", ("v4", "v5"), 1000),
]
