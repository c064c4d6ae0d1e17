from parallel_pool.envpool import make_spec


class AtariEnvSpec:
    """Shim of EnvPool's AtariEnvSpec: gen_config(task=..., **kw) -> a config; AtariEnvSpec(config) validates it."""

    @staticmethod
    def gen_config(task="pong", **kw):
        return dict(kw, _task=task.capitalize() + "-v5")

    def __new__(cls, config):
        config = dict(config)
        return make_spec(config.pop("_task"), **config)
