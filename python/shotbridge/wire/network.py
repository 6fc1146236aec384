"""The requests of a tab as the page itself reports them: ``network``'s records.

The extension reads the top frame's Resource Timing (the document and every resource) when asked,
and completes fetch/XHR from its page hook while network recording is on: their method, headers
and network error (other requests are ``GET`` with no headers). Limits: a cross-origin response
sent without CORS hides its status (0); a page can clear its own timing buffer; a document is
read when ``network`` is asked (what was read stays listed after the tab moves on).

Times are the browser's epoch milliseconds. Headers come only with one request asked for by id;
they and the URL are the page's own data, redacted by whoever shows them.
"""

from __future__ import annotations

from shotbridge.wire.model import Model


class Header(Model):
    name: str
    value: str


class NetworkRequest(Model):
    id: int  # numbered by the extension, for asking one again
    method: str
    url: str
    type: str  # main_frame, fetch, xmlhttprequest, script, stylesheet, image, media, other...
    status: int = 0  # 0: no response (failed, or still in flight)
    status_text: str = ""
    start: float
    end: float | None = None
    duration_ms: float | None = None
    size: int | None = None  # encoded body bytes; None when the browser hides them
    from_cache: bool = False
    error: str | None = None  # why a fetch/XHR got no answer, as the page heard it
    request_headers: list[Header] | None = None
    response_headers: list[Header] | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None or self.status >= 400
