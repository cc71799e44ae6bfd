"""Users: profiles, connected channels and the admin routes that create users and keys.

The package owns the Users table. Other packages reach its data only through :mod:`chalicelib.users.api`
(or :mod:`chalicelib.users.service`), never through its repository or the table's
name (``docs/architecture.md``, "Table ownership"; the import contract ``users-own-their-tables``).
The package itself holds no code, so importing ``chalicelib.users.records`` loads no storage
code (``bench/cold_start.py``).
"""
