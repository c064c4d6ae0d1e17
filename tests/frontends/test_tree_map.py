"""schema.tree_map: the one helper for "an array or a dict of named arrays" (observations, final observations)."""

from operator import itemgetter

import numpy as np

from parallel_pool.schema import tree_map


def test_array_and_dict_forms():
    a = np.arange(6).reshape(3, 2)
    assert np.array_equal(tree_map(itemgetter(1), a), [2, 3])
    d = {"pos": a, "vel": a * 10}
    out = tree_map(itemgetter(2), d)
    assert list(out) == ["pos", "vel"] and np.array_equal(out["pos"], [4, 5]) and np.array_equal(out["vel"], [40, 50])


def test_several_trees_are_zipped_by_key():
    x = {"a": np.zeros(2), "b": np.ones(1)}
    y = {"b": np.full(1, 5.0), "a": np.full(3, 7.0)}  # keys in another order: matched by name
    out = tree_map(lambda *vs: np.concatenate(vs), x, y)
    assert np.array_equal(out["a"], [0, 0, 7, 7, 7]) and np.array_equal(out["b"], [1, 5])
    assert np.array_equal(tree_map(lambda p, q: p + q, np.ones(2), np.ones(2)), [2, 2])


def test_a_copy_is_independent():
    d = {"k": np.zeros(2)}
    c = tree_map(np.array, d)
    c["k"][0] = 1
    assert d["k"][0] == 0
