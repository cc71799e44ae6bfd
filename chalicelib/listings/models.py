"""Listing request and response models (spec §2 Listing, DESIGN §2 "Listings")."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, StringConstraints

from chalicelib.categories.registry import category_key_schema, role_key_schema
from chalicelib.kernel.channels import ChannelKey
from chalicelib.kernel.json_types import Timestamp
from chalicelib.kernel.model_base import Model
from chalicelib.kernel.pagination import Envelope, PageQuery, SearchEnvelope
from chalicelib.listings.status import ListingStatus as ListingStatus  # the status machine's enum, re-exported
from chalicelib.users.models import SocialLinks

Key = Annotated[str, StringConstraints(min_length=1, max_length=64)]
#: ``null`` for a key in a PATCH removes that meta field.
MetaValues = dict[Annotated[str, StringConstraints(min_length=1, max_length=64)], str]
#: A channel key: one the schema lists (another is a 400 naming its item, ``channels.0``, as the
#: ``enum`` says); the service names the ones the owner has not connected in one ``channels`` error.
ChannelName = ChannelKey
#: A webhook id (``whk_`` + ULID); whether it is one of the caller's webhooks the service checks.
WebhookId = Annotated[str, StringConstraints(min_length=1, max_length=64)]


class ListingCreate(Model):
    """Body of ``POST /v1/listings``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"categoryKey": "housing", "roleKey": "offering", "channels": ["telegram"], "webhookIds": [],
         "meta": {"title": "Quiet room in Kreuzberg", "description": "<p>Bright room, shared kitchen.</p>", "location": "Berlin",
                  "propertyType": "room", "rentMonthly": "650", "amenities": "furnished,balcony"}}]})
    categoryKey: Key = Field(json_schema_extra=category_key_schema)
    roleKey: Key = Field(json_schema_extra=role_key_schema)
    meta: MetaValues
    channels: list[ChannelName] = Field(min_length=1, max_length=5)
    webhookIds: list[WebhookId] = Field(default_factory=list, max_length=20)


class ListingUpdate(Model):
    """Body of ``PATCH /v1/listings/{id}``: meta is merged key by key (``null`` removes a key);
    channels and webhookIds replace the current lists. A change of meta returns the listing to
    PENDING; channels/webhookIds alone keep its status."""

    model_config = ConfigDict(extra="forbid")
    meta: dict[Annotated[str, StringConstraints(min_length=1, max_length=64)], str | None] | None = None
    channels: list[ChannelName] | None = Field(default=None, min_length=1, max_length=5)
    webhookIds: list[WebhookId] | None = Field(default=None, max_length=20)


class ListingStatusChange(Model):
    """Body of ``PATCH /v1/listings/{id}/status``: PAUSED pauses an ACTIVE listing, ACTIVE resumes a PAUSED one."""

    model_config = ConfigDict(extra="forbid")
    status: Literal["PAUSED", "ACTIVE"]


class OwnerSummary(Model):
    """The owner's profile summary on a listing."""

    userId: str
    displayName: str | None = None
    verifiedLevel: int = 0
    country: str | None = None
    socialLinks: SocialLinks | None = None


class StatusHistoryEntry(Model):
    """One status change of a listing: the status it entered, when, and why (where a reason was given)."""

    status: ListingStatus
    at: Timestamp
    reason: str | None = Field(
        default=None, description="The administrator's rejection or hiding reason, or the marker of a listing "
        "paused with its suspended owner; null for other changes",
    )


class Listing(Model):
    """A listing as reads return it."""

    id: str
    title: str
    categoryKey: str
    roleKey: str
    meta: dict[str, str]
    channels: list[str] = Field(
        description="The channels the listing offers that its owner has connected now; a channel the owner "
        "disconnects is left out (and shows again once reconnected)",
    )
    webhookIds: list[str] | None = Field(
        default=None,
        exclude_if=lambda ids: ids is None,
        description="The owner's webhooks bound to the listing: only in the owner's own view (detail, mine, "
        "create, update, status responses), never to other users or in search results",
    )
    status: ListingStatus
    statusReason: str | None = None
    statusHistory: list[StatusHistoryEntry] | None = Field(
        default=None,
        exclude_if=lambda history: history is None,
        description="The listing's newest 20 status changes, oldest first (creation PENDING, approval ACTIVE, "
        "rejection, pause, resume, hiding, an edit back to PENDING): only in the owner's own view, like "
        "`webhookIds`",
    )
    profile: OwnerSummary
    createdAt: Timestamp
    updatedAt: Timestamp


class ListingSearchItem(Listing):
    """A search result: adds ``distanceKm`` (great-circle km; null without a geo filter) and ``score``
    (the BM25F relevance score; null unless the results are ranked by relevance)."""

    distanceKm: float | None = None
    score: float | None = Field(
        default=None,
        description="BM25F relevance score (higher is better; docs/search.md, \"Relevance\"), set only when the "
        "results are ordered by relevance (`q` given, no `sort=newest`, no geo filter); null otherwise",
    )


class ListingPage(SearchEnvelope):
    """Search envelope ``{listings, total, totalRelation, page, pageSize, nextCursor}``."""

    listings: list[ListingSearchItem]


class MyListingPage(Envelope):
    """``GET /v1/listings/mine`` envelope, newest first."""

    listings: list[Listing]


class MyListingsFilter(PageQuery):
    """A filtered view of the caller's listings (the Dashboard's "My listings"): one ``status``
    and/or words of the title (``q``, case-insensitive, every word must appear)."""

    status: ListingStatus | None = None
    q: Annotated[str, StringConstraints(max_length=200)] | None = None
