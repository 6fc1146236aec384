"""Everything one server process remembers: settings, the screenshot budget, the bus connection."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from shotbridge.mcp_server.connection import Connection
from shotbridge.mcp_server.ratelimit import ScreenshotBudget
from shotbridge.mcp_server.settings import CaptureSettings

# Seconds to wait for the browser per request kind. Screenshots include the core's encoding.
REQUEST_TIMEOUT_S = 15.0
SCREENSHOT_TIMEOUT_MS = 15_000
NAVIGATE_TIMEOUT_MS = 30_000
# The spec's bound on how long an auto-appended screenshot may wait for a browser to connect.
AUTO_CONNECT_TIMEOUT_S = 2.0


class SessionConnection:
    """A :class:`Connection` that names a shared host session in every request.

    Without it the host keys a client's session by its bus connection: each ``shotctl mcp``
    process has its own recording, screenshots and timeline. ``--shared-session`` sends a name
    instead, so every server started with it shares one.
    """

    def __init__(self, inner: Connection, name: str) -> None:
        self.inner = inner
        self.name = name

    async def request(
        self, cmd: str, args: dict[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        return await self.inner.request(cmd, {**(args or {}), "session": self.name}, **kwargs)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)


@dataclass
class ServerState:
    connection: Connection
    settings: CaptureSettings = field(default_factory=CaptureSettings)
    budget: ScreenshotBudget = field(default_factory=ScreenshotBudget)
    # interact(action="cdp") runs raw DevTools commands only when `shotctl mcp --allow-cdp`.
    allow_cdp: bool = False
    # A host session shared with every server started with the same name (--shared-session).
    shared_session: str | None = None

    def __post_init__(self) -> None:
        if self.shared_session:
            self.connection = SessionConnection(self.connection, self.shared_session)  # type: ignore[assignment]
