"""Valid listing bodies per (category, role), shared by unit and integration tests (plain data, no AWS)."""

from __future__ import annotations

from typing import Any

#: A complete, valid meta per (category, role); coordinates given so no geocoding is involved.
VALID_META: dict[tuple[str, str], dict[str, str]] = {
    ("jobs", "hiring"): {
        "title": "Backend engineer",
        "description": "<p>Build APIs</p>",
        "location": "Berlin",
        "location_lat": "52.52",
        "location_lng": "13.405",
        "employmentType": "full_time",
    },
    ("jobs", "seeking"): {"title": "Looking for a data role", "skills": "python"},
    ("housing", "offering"): {
        "title": "Sunny room",
        "description": "<p>Quiet street</p>",
        "location": "Berlin",
        "location_lat": "52.52",
        "location_lng": "13.405",
        "propertyType": "room",
        "rentMonthly": "650",
    },
    ("housing", "seeking"): {"title": "Need a flat", "location": "Hamburg", "location_lat": "53.55", "location_lng": "9.99"},
    ("mentoring", "mentor"): {"title": "Career mentor", "description": "<p>Ten years</p>", "topics": "career", "yearsExperience": "10"},
    ("mentoring", "mentee"): {"title": "Want a mentor", "topics": "career"},
    ("cofounders", "founder"): {
        "title": "Climate startup",
        "description": "<p>Carbon</p>",
        "location": "Berlin",
        "location_lat": "52.52",
        "location_lng": "13.405",
        "stage": "idea",
    },
    ("cofounders", "joiner"): {"title": "Engineer to join", "skillsNeeded": "engineering"},
}


def listing_body(category: str = "jobs", role: str | None = None, meta: dict[str, str | None] | None = None,
                 **fields: Any) -> dict[str, Any]:
    """A valid ``POST /v1/listings`` body; ``meta`` entries override the defaults (``None`` removes one),
    other keyword arguments replace top-level fields."""
    role = role or next(r for c, r in VALID_META if c == category)
    merged: dict[str, Any] = dict(VALID_META[(category, role)])
    for key, value in (meta or {}).items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return {"categoryKey": category, "roleKey": role, "meta": merged, "channels": ["telegram"], **fields}
