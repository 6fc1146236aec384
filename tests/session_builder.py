"""Builds recorded sessions for the generators' unit tests, entry by entry, as the host would."""

from __future__ import annotations

from typing import Any

from shotbridge.generate.steps import Session
from shotbridge.wire.recording import ShotMeta
from shotbridge.wire.timeline import (
    ActionEntry,
    ErrorEntry,
    NavEntry,
    NetworkEntry,
    ObservationEntry,
    ShotEntry,
    Target,
    Timeline,
    Unique,
)


def target(**over: Any) -> Target:
    unique = Unique(**over.pop("unique", {}))
    return Target(**over, unique=unique)


class Rec:
    """``Rec().nav(url).click(...)``: entries get seq and time like the host gives them."""

    def __init__(self) -> None:
        self.timeline = Timeline()
        self.now = 1_700_000_000.0
        self.url = ""
        self.shots: list[ShotMeta] = []

    def _add(self, entry: Any, dt: float = 0.5) -> Rec:
        self.now += dt
        entry.time = self.now
        self.timeline.add(entry)
        return self

    def nav(self, url: str, title: str = "") -> Rec:
        self.url = url
        return self._add(NavEntry(url=url, title=title, complete=True))

    def act(self, kind: str, dt: float = 0.5, **fields: Any) -> Rec:
        t = fields.pop("target", None) or target(selector="#x", tag="button")
        return self._add(ActionEntry(kind=kind, url=self.url, target=t, **fields), dt)

    def click(self, dt: float = 0.5, **t: Any) -> Rec:
        return self.act("click", dt, target=target(**t))

    def fill(self, value: str, secret: bool = False, **t: Any) -> Rec:
        return self.act("fill", target=target(**t), value=value, secret=secret)

    def error(self, message: str, kind: str = "exception") -> Rec:
        return self._add(ErrorEntry(kind=kind, message=message, url=self.url, source="app.js"))

    def request(
        self,
        method: str,
        url: str,
        body: str | None,
        status: int = 200,
        response: str | None = None,
    ) -> Rec:
        entry = NetworkEntry(
            method=method, url=url, request_body=body, status=status, response_body=response
        )
        return self._add(entry, 0.1)

    def get(self, url: str, response: str, status: int = 200) -> Rec:
        """A read whose (JSON) answer populated the page."""
        return self.request("GET", url, None, status, response)

    def observe(self, texts: dict[str, str], dt: float = 1.0) -> Rec:
        return self._add(ObservationEntry(url=self.url, texts=texts), dt)

    def shot(self, shot_id: int, trigger: str = "explicit", action_id: str | None = None) -> Rec:
        self._add(
            ShotEntry(url=self.url, screenshot_id=shot_id, trigger=trigger, action_id=action_id)
        )
        self.shots.append(
            ShotMeta(id=shot_id, url=self.url, trigger=trigger, action_id=action_id, time=self.now)
        )
        return self

    def session(self, **extra: Any) -> Session:
        return Session(
            session=self.timeline.session,
            started=1_700_000_000.0,
            entries=list(self.timeline.entries),
            screenshots=self.shots,
            **extra,
        )
