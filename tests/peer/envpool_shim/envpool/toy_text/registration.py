"""Shim: EnvPool registers its ids on importing this module; parallel_pool registers them in C++."""
