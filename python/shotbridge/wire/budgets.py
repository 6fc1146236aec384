"""Output budgets: how large an image (and a tool result) may be, defined once.

The defaults suit the Anthropic API and MCP clients: at most 1280 px wide, a long edge of 1568 px
(clients downscale above it, so more pixels only cost bytes) and 500,000 bytes per JPEG, about
what MCP clients accept in one tool result. Every default and every bound on them, wherever they
are taken (bus arguments, the diff picture, the CLI, the core's options), comes from here.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

MAX_WIDTH = 1280  # output px
MAX_LONG_EDGE = 1568  # output px, the longer side
MAX_BYTES = 500_000  # one JPEG; also the tool result size some MCP clients start refusing
QUALITY = 60  # JPEG quality tried first
MIN_QUALITY = 30  # lowest quality before the image is made smaller instead
THUMB_WIDTH = 320
THUMB_MAX_BYTES = 30_000

# What a client may ask for over the bus or on the command line.
MIN_EDGE = 16
MAX_EDGE = 8192
MAX_QUALITY = 95
MIN_MAX_BYTES = 2_000  # = the core's MIN_MAX_BYTES, the smallest JPEG budget it takes
MAX_MAX_BYTES = 1 << 30  # 1 GiB: anything above means "no limit" in practice

Edge = Annotated[int, Field(ge=MIN_EDGE, le=MAX_EDGE)]
Quality = Annotated[int, Field(ge=MIN_QUALITY, le=MAX_QUALITY)]
ByteBudget = Annotated[int, Field(ge=MIN_MAX_BYTES)]
