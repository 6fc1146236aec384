"""The requests of a tab as the extension saw them (chrome.webRequest): ``network``'s records.

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
    type: str  # webRequest's resource type: main_frame, script, xmlhttprequest, image...
    status: int = 0  # 0: no response (failed, or still in flight)
    status_text: str = ""
    start: float
    end: float | None = None
    duration_ms: float | None = None
    size: int | None = None  # Content-Length, when the server sent one
    from_cache: bool = False
    error: str | None = None  # net::ERR_… of a request that failed
    request_headers: list[Header] | None = None
    response_headers: list[Header] | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None or self.status >= 400
