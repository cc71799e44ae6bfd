"""The one seam between a service and its ports (docs/testing.md, "Ports and fakes").

A service keeps the ports it uses now in a :class:`Seam`: its real repositories and domains
(the defaults) until a unit test puts in-memory fakes there with :meth:`Seam.use`, and puts the
previous ports back when it ends. Nothing else changes a service's ports.
"""

from __future__ import annotations


class Seam[PortsT]:
    """The ports a service uses now (:attr:`ports`), replaceable by :meth:`use`."""

    def __init__(self, default: PortsT) -> None:
        self.ports = default

    def use(self, replacement: PortsT) -> PortsT:
        """Make the service read and write through ``replacement``; returns the ports it replaced
        (a test puts them back). Production code never calls this: the defaults serve."""
        previous, self.ports = self.ports, replacement
        return previous
