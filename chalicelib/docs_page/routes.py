"""``GET /docs`` (the rendered API reference) and ``GET /docs/{name}`` (its vendored assets).

Both are public (no API key) and outside the OpenAPI document (they are pages, not API
operations). The page sets a strict Content-Security-Policy: scripts, styles, fonts and
fetches from this origin only, no inline script or style, images from this origin or
``data:`` (Swagger UI's stylesheet embeds its icons), no framing, no forms.
"""

from __future__ import annotations

from pathlib import Path

from chalice.app import Blueprint, Response

bp = Blueprint(__name__)

STATIC = Path(__file__).with_name("static")
#: The files served under /docs/ and their content types; nothing else is served.
ASSETS: dict[str, str] = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "docs.js": "text/javascript; charset=utf-8",
    "docs.css": "text/css; charset=utf-8",
    "swagger-ui-LICENSE.txt": "text/plain; charset=utf-8",
    "swagger-ui-NOTICE.txt": "text/plain; charset=utf-8",
    "swagger-ui-bundle.js.LICENSE.txt": "text/plain; charset=utf-8",
}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}
#: Seconds browsers may cache an asset (they change only with a new vendored version).
ASSET_MAX_AGE = 86_400

# Relative URLs: behind API Gateway the page is /<stage>/docs and the assets /<stage>/docs/...
PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Matching Service API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="docs/swagger-ui.css">
<link rel="stylesheet" href="docs/docs.css">
</head>
<body data-openapi-url="v1/openapi.json">
<header class="docs-header">Matching Service API reference &middot; <a href="v1/openapi.json">openapi.json</a>
&middot; rendered by Swagger UI (<a href="docs/swagger-ui-LICENSE.txt">Apache-2.0</a>)</header>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/docs.js"></script>
</body>
</html>
"""


@bp.route("/docs", methods=["GET"])
def docs() -> Response:
    """The API reference page (HTML); ``/docs/`` (which API Gateway and Chalice route here too) is a
    308 to ``/docs``, since the page's relative asset URLs resolve from the URL without the slash."""
    path = str((bp.current_request.context or {}).get("path") or "")
    if path.endswith("/"):
        return Response(body="", status_code=308, headers={"Location": path.rstrip("/") or "/docs", **SECURITY_HEADERS})
    headers: dict[str, str | list[str]] = {"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-cache", **SECURITY_HEADERS}
    return Response(body=PAGE, status_code=200, headers=headers)


@bp.route("/docs/{name}", methods=["GET"])
def asset(name: str) -> Response:
    """One vendored asset of the page; 404 (the API's error body) for any other name."""
    kind = ASSETS.get(name)
    if kind is None:
        return Response(
            body='{"code":"NOT_FOUND","error":"No such file"}', status_code=404, headers={"Content-Type": "application/json"}
        )
    headers: dict[str, str | list[str]] = {"Content-Type": kind, "Cache-Control": f"public, max-age={ASSET_MAX_AGE}", **SECURITY_HEADERS}
    return Response(body=(STATIC / name).read_text(encoding="utf-8"), status_code=200, headers=headers)
