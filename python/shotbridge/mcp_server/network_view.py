"""``observe what="network"``: the tracked tab's requests since this server started, failed ones
first, filtered by status or URL; one request in full (headers, and the body the recorder kept).

URLs, header values and bodies are the page's data: every one passes :mod:`generate.redact`
before the model sees it, and credentials' headers are never shown at all.
"""

from __future__ import annotations

import time
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from shotbridge.generate import redact
from shotbridge.wire.network import Header, NetworkRequest
from shotbridge.wire.timeline import NetworkEntry

STARTED_MS = time.time() * 1000  # the session's requests: those made since the server started
LIST_MAX = 50
BODY_MAX = 2000
HIDDEN = "<redacted>"
# Headers that carry credentials whatever they look like.
CREDENTIALS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-auth-token"}
)
CLASSES = ("1xx", "2xx", "3xx", "4xx", "5xx")


def matches(r: NetworkRequest, flt: str | None) -> bool:
    """``failed``, a class (``4xx``), a status (``404``), else a URL substring."""
    if not flt:
        return True
    f = flt.strip().lower()
    if f == "failed":
        return r.failed
    if f in CLASSES:
        return r.status // 100 == int(f[0])
    if f.isdigit() and len(f) == 3:
        return r.status == int(f)
    return f in r.url.lower()


def _header(h: Header) -> dict[str, str]:
    name = h.name
    secret = name.lower() in CREDENTIALS or redact.is_secret_key(name)
    return {"name": name, "value": HIDDEN if secret else redact.text(h.value)}


def summary(r: NetworkRequest) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": r.id,
        "method": r.method,
        "url": redact.url(r.url),
        "status": r.status,
        "type": r.type,
        "duration_ms": r.duration_ms,
        "size": r.size,
    }
    if r.error:
        out["error"] = r.error
    if r.status_text and r.failed:
        out["status_text"] = redact.text(r.status_text)
    if r.end is None:
        out["pending"] = True
    return out


def listing(requests: list[NetworkRequest], flt: str | None) -> dict[str, Any]:
    """Failed requests first, then the rest; each group newest first; at most LIST_MAX."""
    chosen = [r for r in requests if matches(r, flt)]
    ordered = sorted(chosen, key=lambda r: (not r.failed, -r.start))
    shown = ordered[:LIST_MAX]
    out: dict[str, Any] = {
        "count": len(chosen),
        "failed": sum(r.failed for r in chosen),
        "requests": [summary(r) for r in shown],
    }
    if len(chosen) > len(shown):
        out["more"] = f"{len(chosen) - len(shown)} more; narrow with filter (a URL part or 4xx)"
    if not requests:
        out["note"] = "No request from the tracked tab since this session started."
    out["detail"] = 'observe(what="network", request_id=N) shows one with headers and body'
    return out


def _recorded(r: NetworkRequest, recorded: list[NetworkEntry]) -> NetworkEntry | None:
    """The recorder's entry of this request (fetch/XHR while ``network`` is on): nearest in time."""
    same = [e for e in recorded if e.url == r.url and e.method.upper() == r.method.upper()]
    # The entry's time is when the page heard the answer.
    return min(same, key=lambda x: abs(x.time * 1000 - (r.end or r.start)), default=None)


def _body(e: NetworkEntry | None) -> dict[str, Any]:
    """The bodies the recorder kept."""
    if e is None:
        return {
            "body": 'not recorded: configure action="capture" settings {"network": true} '
            "records fetch/XHR bodies from then on"
        }
    out = {}
    for key, raw in (("request_body", e.request_body), ("response_body", e.response_body)):
        clean = redact.body(raw)
        if clean is not None:
            out[key] = clean[:BODY_MAX] + ("…" if len(clean) > BODY_MAX else "")
    return out


def detail(requests: list[NetworkRequest], rid: int, recorded: list[NetworkEntry]) -> dict:
    r = next((x for x in requests if x.id == rid), None)
    if r is None:
        raise ToolError(
            f"request_id {rid} is not a request of the tracked tab; "
            'observe(what="network") lists their ids.'
        )
    e = _recorded(r, recorded)
    # The listing's own headers first; the page hook's (fetch/XHR) when it has none.
    sent = r.request_headers or (e.request_headers if e else None) or []
    heard = r.response_headers or (e.response_headers if e else None) or []
    return {
        **summary(r),
        "request_headers": [_header(h) for h in sent],
        "response_headers": [_header(h) for h in heard],
        **_body(e),
    }
