"""bench/stack.py's port choice: the ports one benchmark stack takes are distinct and free."""

from __future__ import annotations

import socket

import pytest

from bench.stack import HOST, bench_ports


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
        return True


def _free_window(width: int) -> range:
    """``width`` consecutive ports on :data:`HOST` that are all free, starting at one the kernel
    just handed out (a neighbour in use moves on to another start)."""
    for _ in range(50):
        with socket.socket() as sock:
            sock.bind((HOST, 0))
            start = int(sock.getsockname()[1])
        window = range(start, start + width)
        if window.stop <= 65536 and all(map(_bindable, window)):
            return window
    raise AssertionError(f"no {width} consecutive free ports found")


def test_every_port_of_a_range_is_handed_out_once_when_all_are_asked_for() -> None:
    window = _free_window(4)
    with socket.socket() as taken:
        taken.bind((HOST, window[1]))
        chosen = bench_ports(3, window)
        assert sorted(chosen) == [window[0], window[2], window[3]]


def test_asking_for_more_ports_than_are_free_names_the_range() -> None:
    window = _free_window(2)
    with socket.socket() as taken:
        taken.bind((HOST, window[0]))
        with pytest.raises(RuntimeError, match=f"fewer than 2 free ports in {window.start}-{window.stop - 1}"):
            bench_ports(2, window)
