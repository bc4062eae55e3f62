"""The TCP sockets a set of processes listens on, read from /proc (Linux) without psutil or ss:
each process's open socket inodes matched against the kernel's tables of listening sockets."""

from __future__ import annotations

import ipaddress
import os
import socket
import struct
from dataclasses import dataclass
from pathlib import Path

LISTEN = "0A"


@dataclass(frozen=True)
class Listening:
    pid: int
    name: str
    address: str
    port: int

    @property
    def loopback(self) -> bool:
        ip = ipaddress.ip_address(self.address)
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped  # ::ffff:127.0.0.1, an IPv6 socket bound to IPv4 loopback
        return ip.is_loopback


def _address(hex_address: str) -> tuple[str, int]:
    """`0100007F:1F90` (IPv4) or 32 hex digits and a port (IPv6), each 32-bit word in host order."""
    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    words = b"".join(struct.pack("=I", struct.unpack(">I", raw[i : i + 4])[0]) for i in range(0, len(raw), 4))
    family = socket.AF_INET if len(raw) == 4 else socket.AF_INET6
    return socket.inet_ntop(family, words), int(port, 16)


def _listening_inodes() -> dict[str, tuple[str, int]]:
    found = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        lines = Path(table).read_text().splitlines()[1:] if Path(table).exists() else []
        for line in lines:
            fields = line.split()
            if fields[3] == LISTEN:
                found[fields[9]] = _address(fields[1])
    return found


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        ppid = int(text.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        todo += children.get(current, [])
    return out


def listening(pids: list[int]) -> list[Listening]:
    """Every listening TCP socket held by one of ``pids`` (processes gone meanwhile are skipped)."""
    inodes = _listening_inodes()
    found = set()
    for pid in pids:
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            inode = target[len("socket:[") : -1] if target.startswith("socket:[") else None
            if inode in inodes:
                address, port = inodes[inode]
                found.add(Listening(pid, name, address, port))
    return sorted(found, key=lambda s: (s.pid, s.port))
