from parallel_pool.frontends import DmPool as DMEnvPool, GymnasiumPool as GymnasiumEnvPool, GymPool as EnvPool  # noqa
from parallel_pool.spec import EnvSpec  # noqa
