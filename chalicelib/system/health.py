"""Readiness: every table and queue the functions depend on answers (``GET /v1/health``).

Each table is described and each queue asked for an attribute, all at once, one attempt each
with the clients' timeouts (:func:`chalicelib.persistence.storage.probe_client`), so the check takes at most
about one connect plus one read timeout (5 s by default) however many dependencies there are.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from chalicelib.kernel import errors
from chalicelib.kernel.config import Settings, settings
from chalicelib.persistence import storage


def dependencies(config: Settings) -> dict[str, Callable[[], None]]:
    """The probes to run, by setting name (``USERS_TABLE``, ``DELIVERY_QUEUE_URL``, ...): every
    table and queue the environment names."""
    probes: dict[str, Callable[[], None]] = {}
    for name, value in sorted(config.model_dump().items()):
        if name.endswith("_TABLE") and value:
            probes[name] = functools.partial(storage.probe_table, str(value))
        elif name.endswith("_QUEUE_URL") and value:
            probes[name] = functools.partial(storage.probe_queue, str(value))
    return probes


def check() -> int:
    """Probe every dependency concurrently.

    Returns
    -------
    int
        How many dependencies answered (all of them).

    Raises
    ------
    Unavailable
        One or more did not answer or are missing; ``details`` names each by its setting
        (e.g. ``LISTINGS_TABLE``) with the error class.
    """
    probes = dependencies(settings())
    failures: list[errors.FieldIssue] = []
    with ThreadPoolExecutor(max_workers=max(1, len(probes)), thread_name_prefix="health") as pool:
        futures = {name: pool.submit(probe) for name, probe in probes.items()}
        for name, future in futures.items():
            try:
                future.result()
            except Exception as exc:  # noqa: BLE001 -- every failure is reported, whatever its kind
                failures.append(errors.FieldIssue(field=name, issue=f"unreachable: {type(exc).__name__}"))
    if failures:
        raise errors.Unavailable(
            f"{len(failures)} of {len(probes)} dependencies are unreachable", failures
        )
    return len(probes)
