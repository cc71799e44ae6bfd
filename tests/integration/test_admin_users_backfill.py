"""``scripts/admin_users_backfill.py``: users written before the administrators' list existed
(without its attributes) join the list; a second run writes nothing; a profile changed between
the read and the write is left to that change."""

from __future__ import annotations

from typing import Any

from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.users import repository
from scripts import admin_users_backfill
from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import aws_calls

LIST_ATTRIBUTES = "nameKey, adminAll, adminLevel, adminCountryLevel"


def _strip(user: User) -> None:
    """Remove the list attributes, as a user item written before the list existed lacks them."""
    storage.update(settings().USERS_TABLE, {"userId": user.user_id}, f"REMOVE {LIST_ATTRIBUTES}")


def _listed(api: Api, admin: User, query: str = "") -> list[str]:
    response = api.call("GET", f"/v1/admin/users?pageSize=100{query}", admin.key)
    assert response.status_code == 200, response.json
    return [u["userId"] for u in response.json["users"]]


def test_users_without_the_attributes_join_every_list_and_a_second_run_writes_nothing(api: Api, admin: User) -> None:
    old_de, old_none = make_user("Zoe", country="de", verifiedLevel=2), make_user("Yann")
    for user in (old_de, old_none):
        _strip(user)
    assert old_de.user_id not in _listed(api, admin)
    assert admin_users_backfill.backfill(dry_run=True) == {"read": 3, "current": 1, "written": 2, "changed": 0}
    assert old_de.user_id not in _listed(api, admin)  # a dry run writes nothing
    with aws_calls("Scan") as scans:
        assert admin_users_backfill.backfill() == {"read": 3, "current": 1, "written": 2, "changed": 0}
    assert scans == []
    assert {old_de.user_id, old_none.user_id} <= set(_listed(api, admin))
    assert _listed(api, admin, "&country=de&verifiedLevel=2") == [old_de.user_id]
    assert old_none.user_id in _listed(api, admin, "&q=yan")
    assert admin_users_backfill.backfill() == {"read": 3, "current": 3, "written": 0, "changed": 0}


def test_a_profile_changed_after_the_read_is_not_overwritten(api: Api, monkeypatch: Any) -> None:
    late = make_user("Xena", country="fr")
    _strip(late)
    read = repository.iter_shard

    def read_then_rename(shard: str) -> Any:
        for user in read(shard):
            if user["userId"] == late.user_id:  # renamed between the read and the write
                assert api.call("PATCH", "/v1/me/profile", late.key, {"displayName": "Xavia"}).status_code == 200
            yield user

    monkeypatch.setattr(repository, "iter_shard", read_then_rename)
    assert admin_users_backfill.backfill()["changed"] == 1
    stored = repository.get_user(late.user_id) or {}
    assert stored.get("nameKey") == f"xavia#{late.user_id}"  # the rename's own attributes stand
