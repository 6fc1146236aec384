"""Everything one server process remembers: settings, the screenshot budget, the bus connection."""

from __future__ import annotations

from dataclasses import dataclass, field

from shotbridge.mcp_server.connection import Connection
from shotbridge.mcp_server.ratelimit import ScreenshotBudget
from shotbridge.mcp_server.settings import CaptureSettings

# Seconds to wait for the browser per request kind. Screenshots include the core's encoding.
REQUEST_TIMEOUT_S = 15.0
SCREENSHOT_TIMEOUT_MS = 15_000
NAVIGATE_TIMEOUT_MS = 30_000
# The spec's bound on how long an auto-appended screenshot may wait for a browser to connect.
AUTO_CONNECT_TIMEOUT_S = 2.0


@dataclass
class ServerState:
    connection: Connection
    settings: CaptureSettings = field(default_factory=CaptureSettings)
    budget: ScreenshotBudget = field(default_factory=ScreenshotBudget)
    # interact(action="cdp") runs raw DevTools commands only when `shotctl mcp --allow-cdp`.
    allow_cdp: bool = False
