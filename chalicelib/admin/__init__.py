"""Administrator routes over the shared packages (outside the layers, as ``system``): the audit log.

Only ``app.py`` imports it. The routes of a domain's own administrator actions stay in that
domain (``approvals``, ``users``); this package serves what belongs to no domain.
"""
