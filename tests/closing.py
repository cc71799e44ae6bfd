"""Test resources made on demand and all closed at the end (receivers, servers)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol


class Closable(Protocol):
    """Anything with a ``close()``."""

    def close(self) -> None:
        """Release the resource."""


@contextmanager
def closing_all[T: Closable](make: Callable[..., T]) -> Iterator[Callable[..., T]]:
    """A factory calling ``make`` that closes everything it made when the block ends (also on failure)."""
    made: list[T] = []

    def new(*args: Any, **options: Any) -> T:
        made.append(item := make(*args, **options))
        return item

    try:
        yield new
    finally:
        for item in made:
            item.close()
