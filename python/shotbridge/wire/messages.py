"""The frames both hops carry, and who may send them.

* native messaging (extension <-> host): JSON, Chrome's framing. Requests go host -> extension as
  ``{"id", "cmd", "args"}``; the extension answers ``{"id", "ok": true, "result"}`` or
  ``{"id", "ok": false, "error": {"code", "message"}}`` and volunteers events as
  ``{"event", "data"}``.
* the bus (client <-> host): msgpack frames with the same ``{"id", "cmd", "args"}`` request and
  ``{"id", "ok", "result" | "error"}`` reply; image bytes travel raw.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from shotbridge.wire.errors import ErrorCode
from shotbridge.wire.model import Model

HOST_NAME = "dev.shotbridge.host"
# The extension's ID follows from the public key in extension/manifest.json ("key").
EXTENSION_ID = "lgpadcfmcnglbejkodbbdfcnfnaffoae"
EXTENSION_ORIGIN = f"chrome-extension://{EXTENSION_ID}/"
PROTOCOL_VERSION = 1


class ClientHello(Model):
    """``hello``: what a bus client says of itself, shown to the user (doctor, the popup).

    A hint, never a trust boundary: the socket's owner and mode decide who may connect, and a
    client could say anything here.
    """

    name: str = Field(max_length=64)  # "shotctl mcp", "shotctl capture", ...
    version: str = Field(max_length=64)
    machine: str = Field(default="", max_length=255)  # the client's host name
    # The client reached the bus through a forwarded or mounted socket (SSH, a container).
    forwarded: bool = False


class ClientInfo(Model):
    """One connected client as the host lists it."""

    id: int
    name: str
    version: str
    machine: str
    forwarded: bool  # it said so, or its peer process on the host's side is ssh
    since: float


class HostStatus(Model):
    """The bus command ``status``: which host this is and whether its extension is connected."""

    pid: int
    connected: bool
    # From the extension's hello; None until it said hello.
    profile_id: str | None = None
    extension_version: str | None = None
    user_agent: str | None = None
    extension_protocol: int | None = None
    tracked_tab: int | None = None
    started: float
    last_active: float
    protocol: int = PROTOCOL_VERSION
    # The host's shotbridge version, and the bus clients that said hello (doctor, the popup).
    version: str | None = None
    clients: list[ClientInfo] = Field(default_factory=list)

    @property
    def ready(self) -> bool:
        """Connected and introduced: a capture can follow straight away."""
        return self.connected and bool(self.profile_id)


class HelloReply(Model):
    """The host's answer to ``hello``: its version (the client compares) and its status."""

    version: str
    protocol: int = PROTOCOL_VERSION
    status: HostStatus


# A page of another machine's disk, served by the host for its browser: what may travel.
PAGE_BUNDLE_MAX_BYTES = 32 * 1024 * 1024
PAGE_BUNDLE_MAX_FILES = 2000


class PageBundle(Model):
    """``serve_page``: a local page and the files beside it, from a client whose disk the
    browser cannot read (a remote machine, a container). ``files`` maps a relative path
    (``/``-separated, below the page's folder) to its bytes; ``page`` is one of those paths."""

    page: str = Field(min_length=1, max_length=1024)
    files: dict[str, bytes] = Field(max_length=PAGE_BUNDLE_MAX_FILES)


class ServedPage(Model):
    """Where the browser loads the served page, for as long as the client stays connected."""

    url: str


class ErrorInfo(Model):
    code: ErrorCode
    message: str


class Request(Model):
    id: str
    cmd: str
    args: dict[str, Any] = Field(default_factory=dict)


class Reply(Model):
    id: str
    ok: bool
    result: dict[str, Any] | None = None
    error: ErrorInfo | None = None


def reply_result(reply: dict[str, Any], failed: str) -> dict[str, Any]:
    """The ``result`` of a reply frame; CommandError for an error reply (``failed`` if unsaid)."""
    from shotbridge.wire.errors import command_error

    if reply.get("ok"):
        result = reply.get("result")
        return result if isinstance(result, dict) else {}
    error = reply.get("error") if isinstance(reply.get("error"), dict) else {}
    raise command_error(
        str(error.get("code") or ErrorCode.INTERNAL), str(error.get("message") or failed)
    )


class Event(Model):
    event: str
    data: dict[str, Any] = Field(default_factory=dict)
