"""The bus command ``interact``: its arguments and its result.

The host maps screenshot pixels and labels to the page and has the extension act
(shotbridge.host.interact); the MCP ``interact`` tool and any other bus client send
:class:`InteractArgs` and read :class:`InteractResult` (or :class:`CdpResult` for ``action="cdp"``).

A result carries exactly the keys it was given: the extension's replies grow keys the host
forwards untouched (``scroll_before``, ``viewport``, ``scrolled_to``...), and a key that was absent
must stay absent (a client tells "no prompt" from "prompt_text: null"). Numbers keep their JSON
type (``140`` stays ``140``, not ``140.0``): clients show these values to a model as JSON.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from shotbridge.wire.model import Model
from shotbridge.wire.screenshot import ScreenshotResult

Action = Literal[
    "click",
    "hover",
    "type",
    "keypress",
    "scroll",
    "navigate",
    "back",
    "forward",
    "reload",
    "cdp",
    "dialog",
    "select",
    "upload",
    "drag",
    "wait",
]
HISTORY = ("back", "forward", "reload")  # actions that are navigations without a URL
Navigation = Literal["url", "back", "forward", "reload"]
Number = int | float  # as the page wrote it: an int stays an int on the way through
WAIT_MAX_MS = 60_000
MAX_UPLOAD_BYTES = 25_000_000  # all files of one upload: they cross native messaging as base64
Jpeg = bytes  # a field named `bytes` below would shadow the type in its class


class DragTarget(Model):
    """Where a drag ends: one of a selector, a label, or x/y (pixels of the same screenshot)."""

    selector: str | None = None
    label: int | None = Field(None, ge=1)
    x: float | None = None
    y: float | None = None

    @model_validator(mode="after")
    def _one(self) -> DragTarget:
        if (self.x is None) != (self.y is None):
            raise ValueError("to: give both x and y, or neither")
        if sum([self.x is not None, self.label is not None, bool(self.selector)]) != 1:
            raise ValueError("to: give one of selector, label or x/y (where the drag ends)")
        return self


class UploadData(Model):
    """One file of an upload, read by the client (shotbridge.client.upload_files)."""

    name: str
    mime: str
    path: str  # where the client read it: the replay's setInputFiles names it
    data: bytes


class InteractArgs(Model):
    """Arguments of the bus command ``interact``."""

    action: Action
    # Where: one of x/y (pixels of screenshot_id), label, selector.
    x: float | None = None
    y: float | None = None
    label: int | None = Field(None, ge=1)
    selector: str | None = None
    screenshot_id: int | None = None
    # What.
    text: str | None = None  # type
    clear: bool = False  # type: replace the field's content instead of inserting at the caret
    key: str | None = None  # keypress: "Enter", "Control+A", …
    modifiers: list[str] = Field(default_factory=list)  # held during click / keypress
    button: Literal["left", "right", "middle"] = "left"
    click_count: int = Field(1, ge=1, le=3)  # 2 = double click
    delta_x: float = 0.0  # scroll by, CSS px
    delta_y: float = 0.0
    # scroll: to a y offset, the top, the bottom; drag: where it ends.
    to: Literal["top", "bottom"] | float | DragTarget | None = None
    # select: option values or labels (an ARIA option's name); an int is an option's index.
    values: list[str | int] | None = None
    # upload: the files as the client read them on its own machine (the host reads no path).
    uploads: list[UploadData] | None = None
    # wait: until text / selector appears (gone: disappears), the URL matches url (a substring
    # or a glob with *), or the network is quiet; at most wait_ms.
    gone: bool = False
    network: bool = False
    wait_ms: int = Field(5000, ge=0, le=WAIT_MAX_MS)
    # navigate.
    url: str | None = None
    navigation: Navigation | None = None
    new_tab: bool = False
    # A beforeunload prompt ("Leave site?") of the page being left is accepted, since the model
    # asked to leave; keep_beforeunload=True leaves it open for action="dialog" to answer.
    keep_beforeunload: bool = False
    # dialog: answer the JavaScript dialog open in the tab (OK / Leave = accept).
    accept: bool | None = None
    prompt_text: str | None = None  # a prompt()'s answer (with accept=True)
    # Raw CDP: allowed by the user's host config only (shotbridge.host.rawcdp); allow_cdp is the MCP
    # server saying it was started with --allow-cdp, and grants nothing by itself.
    method: str | None = None
    params: dict[str, Any] | None = None
    allow_cdp: bool = False
    # After the action.
    include_screenshot: bool = False
    # Arguments of that screenshot, handed to the screenshot command as given: it judges them
    # itself, after the action (a bad one fails the screenshot, never the action before it).
    screenshot: dict[str, Any] = Field(default_factory=dict)
    tab_id: int | None = None
    timeout_ms: int = Field(10_000, ge=100, le=120_000)

    @model_validator(mode="after")
    def _one_target(self) -> InteractArgs:
        if (self.x is None) != (self.y is None):
            raise ValueError("give both x and y, or neither")
        targets = [self.x is not None, self.label is not None, bool(self.selector)]
        if sum(targets) > 1:
            raise ValueError("give one of x/y, label or selector")
        return self

    @property
    def has_target(self) -> bool:
        return self.x is not None or self.label is not None or bool(self.selector)


# ---- results ------------------------------------------------------------------------------


class Given(Model):
    """A reply that is dumped with the keys it was given (set or passed through), and no others."""

    model_config = ConfigDict(extra="allow")

    @model_serializer(mode="wrap")
    def _given_keys(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        given = self.model_fields_set | set(self.model_extra or ())
        return {k: v for k, v in data.items() if k in given}


class XY(Given):
    """A point or a scroll offset, CSS px."""

    x: Number
    y: Number


class Shift(Given):
    """How far the page scrolled since the screenshot a point came from, CSS px."""

    dx: Number
    dy: Number


class PageElement(Given):
    """An element as the page describes it (fields in the page's order; bounds, frame, value...
    pass through)."""

    tag: str | None = None
    role: str | None = None
    name: str | None = None
    selector: str | None = None
    text: str | None = None


class Dialog(Given):
    """A JavaScript dialog (alert, confirm, prompt, beforeunload) open in the tab."""

    type: str
    message: str = ""


class Tab(Given):
    """The tab an action left the browser on (the lenient view of wire.extension.TabInfo)."""

    id: int | None = None
    window_id: int | None = None
    url: str | None = None
    title: str | None = None


class ErrorInfo(Model):
    code: str
    message: str


class ScreenshotFailed(Model):
    """The screenshot after an action failed; the action itself happened."""

    error: ErrorInfo


class Option(Given):
    """An option chosen now (a native <select>'s has all three; an ARIA option its label)."""

    value: str | None = None
    label: str | None = None
    index: int | None = None


class FileSet(Given):
    """A file the input holds now, as the page sees it."""

    name: str
    size: int
    type: str = ""


class DragEnd(Given):
    """One end of a drag: the viewport point, and what was there before it."""

    point: XY | None = None
    hit: PageElement | None = None


class Seen(Given):
    """What a wait saw last: matches of its text or selector, the URL, requests in flight."""

    found: int | None = None
    first: PageElement | None = None
    url: str | None = None
    in_flight: list[str] | None = None
    in_flight_count: int | None = None


class InteractResult(Given):
    """What an action did: the extension's reply, plus where its point came from."""

    action: str | None = None
    # Input actions (click, hover, type, keypress, scroll).
    hit: PageElement | None = None  # what received the input
    point: XY | None = None  # where, viewport CSS px
    focused: PageElement | None = None  # after type / keypress
    scroll_corrected: Shift | None = None  # the point followed the content by this much
    retargeted: bool | None = None  # a label's element had moved: acted where it is now
    screenshot_id: int | None = None  # the screenshot x/y or the label came from
    css_point: XY | None = None  # x/y (or the label's centre) in viewport CSS px
    label: int | None = None
    label_selector: str | None = None
    # Where the tab is after it.
    url: str | None = None
    title: str | None = None
    scroll: XY | None = None
    navigated: bool | None = None
    # navigate.
    navigation: str | None = None
    tab: Tab | None = None
    # dialog.
    accepted: bool | None = None
    prompt_text: str | None = None
    dialog: Dialog | None = None  # answered (dialog) or opened by the action (the others)
    notes: list[str] = Field(default_factory=list)
    # select and upload: the element and what it holds now.
    element: PageElement | None = None
    selected: list[Option] | None = None
    shows: str | None = None  # an ARIA combobox's text
    files: list[FileSet] | None = None
    # drag.
    start: DragEnd | None = None
    end: DragEnd | None = None
    html5: bool | None = None  # the page started an HTML5 drag (dropped with drag events)
    # wait.
    met: bool | None = None
    waited_ms: int | None = None
    seen: Seen | None = None
    # include_screenshot: the screenshot command's result, or why there is none.
    screenshot: ScreenshotFailed | ScreenshotResult | None = Field(None, union_mode="left_to_right")


class CdpImage(Given):
    """Page.captureScreenshot through raw CDP: the host's masked screenshot."""

    jpeg: Jpeg
    width: int
    height: int
    bytes: int
    source_width: int
    source_height: int
    masked: int = 0
    screenshot_id: int | None = None
    url: str | None = None  # the page it shows


class CdpResult(Given):
    """Result of ``interact`` with ``action="cdp"`` (and of the bus command ``cdp``)."""

    method: str | None = None
    tab_id: int | None = None
    result: Any = Field(default_factory=dict)  # Chrome's own reply, as it sent it
    image: CdpImage | None = None


class Navigated(Given):
    """The extension's ``navigate`` reply, once the load completes (or a dialog holds it)."""

    tab: Tab | None = None
    dialog: Dialog | None = None  # a dialog the new page opened while loading
    notes: list[str] = Field(default_factory=list)  # e.g. what it took to leave the old page
