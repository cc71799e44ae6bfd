"""What other packages may call on :mod:`chalicelib.webhooks`: its public face.

Other packages import this module, never the package's repository: the transaction item
builders and reads of the package's table are published here by name (the owner of a table
builds every item of it, so another package's transaction can hold them), beside the few
rules that go with them. Changes of the package's own records go through
:mod:`chalicelib.webhooks.service`.
"""

from __future__ import annotations

from chalicelib.webhooks.repository import get_many

__all__ = [
    "get_many",
]
