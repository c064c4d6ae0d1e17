"""The DeepMind Control Suite family's models, built at make time by the installed dm_control.

A DMC task's config key `xml_file` defaults to a model builder of dm_control, written
"dm_control:<module>.<function>(<literal keyword arguments>)", e.g.
"dm_control:suite.cartpole.get_model_and_assets(num_poles=2)". `resolve` calls it once, writes the XML and its assets
(the files dm_control passes to MuJoCo as a virtual file system) into a cache directory, and returns the XML's path,
which the C++ env compiles. The model is therefore exactly dm_control's, including the models dm_control edits in
Python, and no Python runs per step. See docs/decisions.md ("DMC models").
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import importlib.metadata
import os
import re
import shutil
import socket
import tempfile
from typing import Any
from xml.etree import ElementTree

from parallel_pool.orphans import pid_alive

PREFIX = "dm_control:"
_CALL = re.compile(r"^dm_control:(?P<func>[A-Za-z_][\w.]*)\((?P<args>.*)\)$", re.DOTALL)
INSTALL_HINT = 'pip install "parallel-pool[dmc]"'
# What a cache folder holds and how (model.xml, the assets beside it, the LAYOUT_FILE marker): part of the cache key,
# so a writer that lays folders out differently never reads another's; bump it whenever _write changes.
LAYOUT = 2
LAYOUT_FILE = ".layout"
_TMP = ".tmp-"  # a folder being written: .tmp-<host>-<pid>-<random>, renamed into place when complete


def is_builder(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(PREFIX)


def resolve(key: str, value: Any) -> Any:
    """A config value naming a dm_control model builder becomes the path of the built model; others pass through."""
    if not is_builder(value):
        return value
    try:
        return model_path(value)
    except ValueError as e:
        raise ValueError(f"config key {key!r}: {e}") from None


def _parse(source: str) -> tuple[str, dict[str, Any]]:
    """ "dm_control:mod.func(a=1, b='x')" -> ("mod.func", {"a": 1, "b": "x"}); only literal keyword arguments."""
    m = _CALL.match(source)
    if m is None:
        raise ValueError(f"{source!r} is not of the form 'dm_control:<module>.<function>(<keyword arguments>)'")
    try:
        call = ast.parse(f"f({m['args']})", mode="eval").body
        assert isinstance(call, ast.Call) and not call.args
        kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords if kw.arg is not None}
        assert len(kwargs) == len(call.keywords)
    except (SyntaxError, ValueError, AssertionError):
        raise ValueError(f"{source!r}: the builder's arguments must be keyword arguments with literal values") from None
    return m["func"], kwargs


def _dm_control_version() -> str:
    try:
        return importlib.metadata.version("dm-control")
    except importlib.metadata.PackageNotFoundError:
        raise ValueError(
            "the DeepMind Control Suite models come from the dm_control package, which is not installed: "
            + INSTALL_HINT
        ) from None


def cache_root() -> str:
    """$PARALLEL_POOL_CACHE, else $XDG_CACHE_HOME/parallel_pool, else ~/.cache/parallel_pool; made absolute (a
    relative path would name a different folder after a chdir, and the engine gets the model's path)."""
    root = os.environ.get("PARALLEL_POOL_CACHE")
    if not root:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(xdg, "parallel_pool")
    return os.path.abspath(os.path.join(root, "dmc-models"))


def _build(func: str, kwargs: dict[str, Any]) -> tuple[str | bytes, dict[str, str | bytes]]:
    module_name, _, name = func.rpartition(".")
    try:
        module = importlib.import_module(f"dm_control.{module_name}")
        builder = getattr(module, name)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"dm_control has no model builder {func!r} ({e})") from None
    if isinstance(kwargs.get("random"), int):  # a builder drawing from a RandomState (lqr's) gets one seeded so
        import numpy as np

        kwargs = {**kwargs, "random": np.random.RandomState(kwargs["random"])}
    result = builder(**kwargs)
    if not isinstance(result, tuple):  # a builder returning the XML alone (quadruped's make_model): the suite's
        result = (result, importlib.import_module("dm_control.suite.common").ASSETS)  # own includes complete it
    xml, assets = result
    return xml, dict(assets)


def _asset_dirs(xml: str | bytes) -> list[str]:
    """The folders where MuJoCo looks for the model's mesh and texture files: its <compiler>'s meshdir and
    texturedir (assetdir sets both), "" for the model's own folder."""
    compiler = ElementTree.fromstring(xml).find("compiler")
    attrib = compiler.attrib if compiler is not None else {}
    dirs = [attrib.get(key, attrib.get("assetdir", "")) for key in ("meshdir", "texturedir")]
    return list(dict.fromkeys(dirs))


def _write(folder: str, xml: str | bytes, assets: dict[str, str | bytes]) -> None:
    """The XML as model.xml and its assets beside it. dm_control hands MuJoCo the assets as a virtual file system,
    which matches a mesh or texture by its bare file name wherever the XML's meshdir/texturedir point (dog.xml reads
    them from "dog_assets/"); on disk a bare-named asset must be in those folders, so it is written into each."""
    dirs = _asset_dirs(xml)
    files: dict[str, str | bytes] = {"model.xml": xml}
    for name, data in assets.items():
        for d in dirs if os.path.basename(name) == name else [""]:
            files[os.path.join(d, name)] = data
    for name, data in files.items():
        path = os.path.normpath(os.path.join(folder, name))
        if not path.startswith(folder + os.sep):
            raise ValueError(f"dm_control asset name {name!r} leaves the model folder")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)


def _complete(folder: str) -> bool:
    """A folder this layout wrote to the end (the marker is written last, before the folder is renamed into place)."""
    try:
        with open(os.path.join(folder, LAYOUT_FILE)) as f:
            return f.read() == str(LAYOUT)
    except OSError:
        return False


def _clean_stale(root: str) -> None:
    """Remove the temp folders of writers on this host that died before renaming theirs (killed, power loss)."""
    prefix = f"{_TMP}{socket.gethostname()}-"
    for name in os.listdir(root):
        if not name.startswith(prefix):
            continue
        pid = name[len(prefix) :].split("-", 1)[0]
        if pid.isdigit() and not pid_alive(int(pid)):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)


@functools.cache
def model_path(source: str) -> str:
    """The path of the XML that the builder `source` returns (built and written on first use; the cache folder is
    keyed by the folder LAYOUT, dm_control's version and location and `source`, so a different dm_control or
    writer never reuses it)."""
    func, kwargs = _parse(source)
    version = _dm_control_version()
    import dm_control

    key = f"{LAYOUT}\0{version}\0{dm_control.__path__[0]}\0{source}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    root = cache_root()
    folder = os.path.join(root, f"{version}-{digest}")
    target = os.path.join(folder, "model.xml")
    if _complete(folder):
        return target
    xml, assets = _build(func, kwargs)
    os.makedirs(root, exist_ok=True)
    _clean_stale(root)
    # Written in a private folder, then renamed into place: concurrent makes (other processes) never see a
    # half-written model; the loser of a race drops its copy. A folder in the way that is not complete (a foreign
    # or half-written one) is moved aside first, or the rename would fail with "directory not empty" forever.
    prefix = f"{_TMP}{socket.gethostname()}-{os.getpid()}-"
    tmp = tempfile.mkdtemp(prefix=prefix, dir=root)
    aside = tmp + "-aside"
    try:
        _write(tmp, xml, assets)
        with open(os.path.join(tmp, LAYOUT_FILE), "w") as f:
            f.write(str(LAYOUT))
        for _ in range(3):
            try:
                os.rename(tmp, folder)
                break
            except OSError:
                if _complete(folder):  # another process won the race
                    break
                if os.path.lexists(folder):
                    shutil.rmtree(aside, ignore_errors=True)
                    os.rename(folder, aside)
        if not _complete(folder):
            raise OSError(f"could not write the DMC model cache folder {folder}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if os.path.isdir(aside):
            shutil.rmtree(aside, ignore_errors=True)
        elif os.path.lexists(aside):
            os.remove(aside)
    return target
