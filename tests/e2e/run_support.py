"""What the end-to-end tests of the run command look at: the processes of a running arena."""

from __future__ import annotations

from pathlib import Path

from service.supervisor import children_of


def processes_of(data: Path) -> list[int]:
    """Every process running with this arena's environment (``GONGZHU_DATA_DIR``), wherever its
    parent is: a stray work horse too (not Redis, which writes its title over it)."""
    mark = f"GONGZHU_DATA_DIR={data}\0".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if mark in (entry / "environ").read_bytes() and _state(int(entry.name)) != "Z":
                    found.append(int(entry.name))
            except OSError:  # ended meanwhile
                continue
    return found


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def alive(pid: int) -> bool:
    try:
        return _state(pid) != "Z"
    except OSError:
        return False


def descendants(pid: int) -> list[int]:
    found = []
    for child in children_of(pid):
        found += [child, *descendants(child)]
    return found
