"""A JSON reply from a test's own HTTP handler (the apps the e2e tests serve)."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any


def send_json(handler: BaseHTTPRequestHandler, status: int, value: Any) -> None:
    out = json.dumps(value).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(out)))
    handler.end_headers()
    handler.wfile.write(out)
