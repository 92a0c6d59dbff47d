"""What a process and its descendants listen on, read from /proc (Linux): every TCP socket in LISTEN and every
unconnected UDP socket, with the address it is bound to."""

from __future__ import annotations

import ipaddress
import sys
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class Listener:
    pid: int
    name: str  # the process's name (/proc/PID/comm, 15 characters at most)
    protocol: str  # tcp, tcp6, udp, udp6
    host: str
    port: int

    @property
    def loopback(self) -> bool:
        address = ipaddress.ip_address(self.host)
        mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
        return (mapped or address).is_loopback


def listeners(root: int) -> list[Listener]:
    """The listening sockets of process ``root`` and of every process below it."""
    bound = _bound_sockets()
    found = []
    for pid in family(root):
        try:
            name = (PROC / str(pid) / "comm").read_text().strip()
            inodes = _socket_inodes(PROC / str(pid) / "fd")
        except OSError:  # the process ended meanwhile
            continue
        found += [Listener(pid, name, *bound[inode]) for inode in sorted(inodes & bound.keys())]
    return found


def _socket_inodes(fds: Path) -> set[str]:
    inodes = set()
    for entry in fds.iterdir():
        try:
            link = entry.readlink().name
        except OSError:  # closed meanwhile
            continue
        if link.startswith("socket:["):
            inodes.add(link[len("socket:["):-1])
    return inodes


def family(root: int) -> list[int]:
    """Process ``root`` and every process below it (read once from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])  # the name, in parentheses, may hold spaces
            children.setdefault(parent, []).append(int(entry.name))
    found, waiting = [], [root]
    while waiting:
        pid = waiting.pop()
        found.append(pid)
        waiting += children.get(pid, [])
    return found


def _bound_sockets() -> dict[str, tuple[str, str, int]]:
    """inode -> (protocol, host, port) of every listening TCP and unconnected UDP socket on the machine."""
    listening = {"tcp": "0A", "tcp6": "0A", "udp": "07", "udp6": "07"}  # TCP_LISTEN; UDP's TCP_CLOSE: unconnected
    bound = {}
    for protocol, state in listening.items():
        for line in (PROC / "net" / protocol).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, status, inode = fields[1], fields[2], fields[3], fields[9]
            if status == state and not int(remote.split(":")[1], 16):
                host, port = local.split(":")
                bound[inode] = (protocol, _address(host), int(port, 16))
    return bound


def _address(hex_host: str) -> str:
    """/proc/net's host: hex of 32-bit words in the machine's byte order."""
    raw = bytes.fromhex(hex_host)
    if sys.byteorder == "little":
        raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(raw))
