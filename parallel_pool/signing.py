"""Signed Python-env snapshots: the key and the HMAC that let `set_state` unpickle only what this user made.

A Python env's snapshot is a pickle, and unpickling runs code: bytes from a file someone else wrote must never reach
`pickle.loads`. So every env's payload is signed (HMAC-SHA256) when it is taken and verified before anything
unpickles it. The key is the user's: by default 32 random bytes in a per-user key file, made (mode 0600) at first
use, so a snapshot saved today loads tomorrow in a new process; `PARALLEL_POOL_SNAPSHOT_KEY_FILE` names another
file (shared by the machines or the people that exchange snapshots); `get_state(ids, key=...)` /
`set_state(ids, state, key=...)` take a key directly. `set_state(..., trusted=True)` skips the check, for
snapshots the user vouches for (an unsigned one from an older version, or a lost key).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import typing as _typing

if _typing.TYPE_CHECKING:  # the annotations' names only (strings at run time): dir() lists the API
    from typing import Any

__all__ = ["KEY_FILE_ENV", "key_file", "snapshot_key", "sign", "verified"]

KEY_FILE_ENV = "PARALLEL_POOL_SNAPSHOT_KEY_FILE"
_KEY_BYTES = 32  # a new key file's random bytes
_MIN_KEY_BYTES = 16  # a key given or read: shorter ones are mistakes (b"", a short password)
_TAG = b"parallel_pool hmac-sha256\n"  # a signed row starts with this, then the MAC, then the payload
_MAC_BYTES = hashlib.sha256().digest_size
_DOMAIN = b"parallel_pool.python-env snapshot\0"  # the MAC signs this prefix + payload: no other use of the key


def key_file() -> str:
    """The path of the snapshot key file.

    Returns:
        `$PARALLEL_POOL_SNAPSHOT_KEY_FILE`, else parallel_pool/snapshot.key under `$XDG_CONFIG_HOME` (default
        ~/.config). The file is made at first use.
    """
    path = os.environ.get(KEY_FILE_ENV)
    if path:
        return os.path.abspath(os.path.expanduser(path))
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(config, "parallel_pool", "snapshot.key")


def _create(path: str) -> None:
    """A new key file of random bytes, mode 0600 from the start; a file another process made first is kept."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(_KEY_BYTES))
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)  # never replaces a key file: snapshots signed with it would stop loading
        except FileExistsError:
            pass
    finally:
        os.unlink(tmp)


def _read(path: str) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        _create(path)
        fd = os.open(path, os.O_RDONLY)
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(f.fileno()).st_mode
        if mode & (stat.S_IWGRP | stat.S_IWOTH | stat.S_IROTH):
            raise ValueError(
                f"the snapshot key file {path} is writable by others or readable by everyone (mode "
                f"{stat.S_IMODE(mode):o}): whoever reads it can sign snapshots that run code here; chmod 600 it"
            )
        key = f.read()
    if len(key) < _MIN_KEY_BYTES:
        raise ValueError(
            f"the snapshot key file {path} holds {len(key)} bytes; a key needs at least {_MIN_KEY_BYTES} (delete the "
            "file to have a new random one made, which the snapshots signed so far do not verify against)"
        )
    return key


def snapshot_key(key: Any = None) -> bytes:
    """The key that signs and verifies Python-env snapshots.

    Args:
        key: the key (bytes, at least 16 of them), or None for the key file's (`key_file()`, made at first use).

    Returns:
        The key's bytes.

    Raises:
        TypeError: `key` is not bytes.
        ValueError: `key` is shorter than 16 bytes.
        OSError: the key file cannot be read or made.
    """
    if key is None:
        try:
            return _read(key_file())
        except OSError as e:
            raise OSError(
                f"the snapshot key file {key_file()} cannot be read or made ({e}); set {KEY_FILE_ENV} to a file of "
                "yours, or give key=... to get_state / set_state"
            ) from e
    if not isinstance(key, (bytes, bytearray, memoryview)):
        raise TypeError(f"key must be bytes (at least {_MIN_KEY_BYTES}), got {type(key).__name__}")
    key = bytes(key)
    if len(key) < _MIN_KEY_BYTES:
        raise ValueError(f"key has {len(key)} bytes; a snapshot key needs at least {_MIN_KEY_BYTES}")
    return key


def _mac(key: bytes, payload: bytes) -> bytes:
    return hmac.new(key, _DOMAIN + payload, hashlib.sha256).digest()


def sign(key: bytes, payload: bytes) -> bytes:
    """Sign one env's payload.

    Args:
        key: the key (`snapshot_key()`).
        payload: the env's pickled snapshot.

    Returns:
        The signed row: a tag, the HMAC-SHA256 of the payload, then the payload.
    """
    return _TAG + _mac(key, payload) + payload


def verified(row: bytes, key: bytes | None, trusted: bool, what: str) -> bytes:
    """The payload of a signed row, once its MAC is verified; nothing is unpickled here.

    Args:
        row: a row made by `sign`, or an unsigned payload.
        key: the key to verify with (None only with `trusted=True`).
        trusted: return the payload unverified (an unsigned row is all payload).
        what: how the error message names the row (e.g. "env 3's snapshot").

    Returns:
        The payload.

    Raises:
        ValueError: the row is unsigned or its MAC does not verify with `key` (the message says what to do).
    """
    signed = row.startswith(_TAG) and len(row) >= len(_TAG) + _MAC_BYTES
    payload = row[len(_TAG) + _MAC_BYTES :] if signed else row
    if trusted:
        return payload
    assert key is not None
    if not signed:
        problem = "is not signed (taken by an older version, or not by parallel_pool)"
    elif not hmac.compare_digest(row[len(_TAG) : len(_TAG) + _MAC_BYTES], _mac(key, payload)):
        problem = "has a signature that this key does not verify (another key signed it, or it was changed)"
    else:
        return payload
    raise ValueError(
        f"set_state: {what} {problem}. A Python env's snapshot is a pickle, and unpickling runs code, so it is only "
        f"loaded when signed with your key: restore it where the key file it was signed with is ({key_file()} "
        f"here, or {KEY_FILE_ENV}), or give that key as set_state(..., key=...); only if you trust where the "
        "snapshot came from, set_state(..., trusted=True) loads it unchecked"
    )


# `annotations` is the __future__ import's flag, not part of the API (the compiler read it already): out of dir()
del annotations
