"""What another process holds, read the way a local user, a debugger or a core dump would:
its environment (``/proc/<pid>/environ``) and its writable memory (``/proc/<pid>/mem``).

For the tests of docs/settings.md, "Each process reads its own settings", and of
docs/security-codec.md, "Secrets per process": the attack suite's per-process rows and the
end-to-end tests of ``seawall up`` and ``seawall acp``. Reading another process's memory
takes what a debugger takes (same user, ptrace allowed), which these tests, the processes'
starter or its ancestor, have.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

CHUNK = 1 << 20


def environ_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")
    return dict(v.split("=", 1) for v in raw.split("\0") if "=" in v)


def children_of(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def descendants_of(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        children = children_of(todo.pop())
        found += children
        todo += children
    return found


def cmdline_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def memory_holds(pid: int, value: str) -> bool:
    """Whether ``value`` is in any writable mapping of process ``pid`` (:func:`held_in_memory`)."""
    return bool(held_in_memory(pid, {value: value}))


def held_in_memory(pid: int, values: Mapping[str, str]) -> set[str]:
    """The names of ``values`` (name -> value) found in any writable mapping of process
    ``pid``: its heap, stacks and anonymous memory, where whatever it read or built lives;
    each as UTF-8 or as the UTF-16/UCS-4 a str may be stored in. One pass over the memory."""
    needles = {
        name: [value.encode(), value.encode("utf-16-le"), value.encode("utf-32-le")]
        for name, value in values.items()
    }
    overlap = max((len(n) for found in needles.values() for n in found), default=1) - 1
    held: set[str] = set()
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            parts = line.split()
            if not parts[1].startswith("rw"):
                continue
            start, end = (int(x, 16) for x in parts[0].split("-"))
            tail = b""
            for at in range(start, end, CHUNK):
                try:
                    mem.seek(at)
                    data = tail + mem.read(min(CHUNK, end - at))
                except (OSError, ValueError, OverflowError):
                    break  # unreadable (a guard page, gone meanwhile)
                held |= {name for name, found in needles.items() if any(n in data for n in found)}
                tail = data[-overlap:] if overlap else b""
    return held
