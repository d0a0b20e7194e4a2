"""Another host on this machine, for workers that must reach the arena over the network only: a
Linux network namespace joined to this one by a veth pair (``ip netns add`` + veth, as root).

Where namespaces cannot be made (not root, no ``ip``, a sandbox that forbids them) the "host" is
a plain separate process on this one, and says so: :attr:`RemoteHost.isolated` is false and
:attr:`RemoteHost.fallback` tells why.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class RemoteHost:
    arena_address: str
    """This side's address, the one the remote host reaches (bind the arena's servers here)."""
    prefix: tuple[str, ...]
    """The command that runs a program on the remote host (empty: on this one)."""
    fallback: str
    """Why there is no network namespace (empty when there is one)."""

    @property
    def isolated(self) -> bool:
        return not self.fallback


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


def _free_subnet() -> str:
    """``10.X.Y`` of a /30 no interface of this machine uses (other runs make their own)."""
    used = subprocess.run(["ip", "-4", "-o", "addr"], check=True, capture_output=True, text=True)
    while True:
        subnet = f"10.{secrets.randbelow(150) + 100}.{secrets.randbelow(256)}"
        if f" {subnet}." not in used.stdout:
            return subnet


@contextmanager
def remote_host() -> Iterator[RemoteHost]:
    """A network namespace reached over a veth pair (a /30: this side ``.1``, the host ``.2``),
    removed afterwards; else this machine (:attr:`RemoteHost.fallback` says why)."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        yield RemoteHost("127.0.0.1", (), "not root, or no `ip` command")
        return
    name = f"gz{secrets.token_hex(5)}"  # interface names are at most 15 characters
    here, there = f"{name}a", f"{name}b"
    subnet = _free_subnet()
    try:
        _ip("netns", "add", name)
    except subprocess.CalledProcessError as error:
        yield RemoteHost("127.0.0.1", (), f"`ip netns add` failed: {error.stderr.strip()}")
        return
    try:
        _ip("link", "add", here, "type", "veth", "peer", "name", there)
        _ip("link", "set", there, "netns", name)
        _ip("addr", "add", f"{subnet}.1/30", "dev", here)
        _ip("link", "set", here, "up")
        _ip("-n", name, "addr", "add", f"{subnet}.2/30", "dev", there)
        _ip("-n", name, "link", "set", there, "up")
        yield RemoteHost(f"{subnet}.1", ("ip", "netns", "exec", name), "")
    finally:
        # the pair goes with the namespace; the link too when the move into it failed
        subprocess.run(["ip", "link", "del", here], check=False, capture_output=True)
        subprocess.run(["ip", "netns", "del", name], check=False, capture_output=True)
