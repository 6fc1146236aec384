"""The extension's commands: what the host asks of it, and what it answers.

``COMMANDS`` is the declaration of every command: field names, defaults and bounds as the
extension reads them (extension/lib/args.js). scripts/export_wire_schema.py writes their JSON Schema
to tests/extension/wire-schema.json, and the extension's unit tests hold its parsing to that file.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from shotbridge.wire.emulate import (
    MAX_SCALE,
    MAX_SIZE,
    MIN_SIZE,
    ColorScheme,
    Emulation,
    PageMedia,
    ReducedMotion,
)
from shotbridge.wire.geometry import Point, Rect, Size
from shotbridge.wire.messages import PROTOCOL_VERSION
from shotbridge.wire.model import Model
from shotbridge.wire.network import NetworkRequest

# How the extension reads a field where it is not plain validation (the schema carries it as
# "x-coerce", and tests/extension/wire-args.test.mjs holds lib/args.js to it):
#   truthy:   any value is read as true or false (never refused)
#   fallback: a value out of bounds is replaced by the default (never refused)
TRUTHY = {"x-coerce": "truthy"}
FALLBACK = {"x-coerce": "fallback"}
# Text that must hold something besides whitespace (the extension trims before it looks).
NON_BLANK = r"\S"
MAX_TIMEOUT_MS = 300_000  # longer deadlines are cut to this, not refused


class ExtensionArgs(Model):
    """What every command takes. A null field reads as an absent one (its default)."""

    # The command's deadline: one positive number of ms, cut to MAX_TIMEOUT_MS.
    timeout_ms: float = Field(10_000, gt=0, json_schema_extra={"x-clamp-max": MAX_TIMEOUT_MS})


class TabArgs(ExtensionArgs):
    """A command that acts on one tab."""

    tab_id: int | None = None  # default: the tracked tab


class DialogInfo(Model):
    """A JavaScript dialog open in a tab, as Chrome (or the page itself) reported it."""

    type: Literal["alert", "confirm", "prompt", "beforeunload"]
    message: str
    default_prompt: str = ""
    url: str = ""
    opened_at: float  # the service worker's Date.now()
    # "page": known only from the page's own report, so not answerable through the debugger.
    reported_by: Literal["page"] | None = None


class TabInfo(Model):
    id: int
    window_id: int
    url: str
    title: str
    active: bool
    tracked: bool = False
    dialog: DialogInfo | None = None  # list_tabs only: the dialog open in the tab


class Hello(Model):
    """First event the extension sends after connecting."""

    protocol: int = PROTOCOL_VERSION
    extension_version: str
    profile_id: str  # random id kept in chrome.storage.local: one per browser profile
    user_agent: str
    tracked_tab: int | None = None


class PingArgs(ExtensionArgs):
    """``ping``: is the extension there."""


class PingReply(Model):
    pong: bool
    extension_version: str


class ListTabsArgs(ExtensionArgs):
    """``list_tabs``: every tab of every window."""


class ListTabsReply(Model):
    tabs: list[TabInfo]


class TrackArgs(ExtensionArgs):
    """``track``: pin the tab commands act on when they name none (null: follow the active tab)."""

    tab_id: int | None  # required, null allowed


class TabReply(Model):
    """``track``, and ``navigate`` / ``open_tab`` once the load is over (or a dialog stopped it)."""

    tab: TabInfo
    dialog: DialogInfo | None = None  # opened while the page loaded
    notes: list[str] = Field(default_factory=list)
    window_id: int | None = None  # open_tab: the popup window it opened


class NavigateArgs(TabArgs):
    """``navigate``: load a URL, or go back / forward / reload, and wait for the load."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"url": "https://example.com/"}]})

    # An absolute http, https, file, about, data or blob URL.
    url: str | None = Field(None, pattern=NON_BLANK)
    # Without one: "goto" when there is a url (and there must be one then).
    action: Literal["goto", "back", "forward", "reload"] | None = None
    new_tab: bool = Field(False, json_schema_extra=TRUTHY)  # open the url in a new tab
    # Leave a beforeunload prompt open for ``dialog`` to answer, instead of accepting it.
    keep_beforeunload: bool = False


class OpenTabArgs(ExtensionArgs):
    """``open_tab``: the url in a new unfocused popup window of its own."""

    url: str = Field(pattern=NON_BLANK)
    width: int = Field(1280, ge=200, le=4000, json_schema_extra=FALLBACK)
    height: int = Field(800, ge=200, le=4000, json_schema_extra=FALLBACK)


class CloseTabArgs(ExtensionArgs):
    """``close_tab``: close a tab ``open_tab`` opened (never one of the user's)."""

    tab_id: int


class CloseTabReply(Model):
    closed: int


class ScrollToY(Model):
    y: float


class ScrollToSelector(Model):
    selector: str = Field(pattern=NON_BLANK)


# Where to scroll before capturing: a y offset, the top or bottom, or an element (centred).
ScrollTarget = Literal["top", "bottom"] | ScrollToY | ScrollToSelector


def scroll_target(value: str) -> str | dict[str, Any]:
    """A ``ScrollTarget`` from text: "top" / "bottom", a y offset, or else a selector."""
    v = value.strip()
    if v.lower() in ("top", "bottom"):
        return v.lower()
    try:
        return {"y": float(v)}
    except ValueError:
        return {"selector": v}


class TileCaps(Model):
    """Output px every full-page tile must fit (the core's caps)."""

    max_width: int = Field(ge=16)
    max_long_edge: int = Field(ge=16)


class CaptureArgs(TabArgs):
    """``capture``: screenshot of a tab."""

    # A tile needs a full-page capture (and a selector excludes full_page).
    model_config = ConfigDict(
        json_schema_extra={
            "dependentSchemas": {"tile": {"properties": {"full_page": {"const": True}}}}
        }
    )

    # auto: captureVisibleTab for a plain viewport capture while Chrome's quota allows, else CDP.
    method: Literal["auto", "cdp", "visible"] = "auto"
    format: Literal["jpeg", "png"] = "jpeg"
    quality: int = Field(90, ge=1, le=100)
    # Render scale (image px per CSS px) asked of the browser; None = devicePixelRatio.
    scale: float | None = Field(None, gt=0, le=4)
    selector: str | None = Field(None, pattern=NON_BLANK)  # clip to this element
    full_page: bool = False
    max_height_css: int = Field(16384, ge=1)
    debugger_idle_ms: float = Field(2000, ge=0, le=60_000)  # keep the debugger attached this long
    scroll: ScrollTarget | None = None  # applied before capturing
    # full_page only: capture CSS bands that each fit these caps instead of one tall image.
    tile: TileCaps | None = None
    # CDP only: render at the scale that makes the image fit these caps (never upscaling).
    fit: TileCaps | None = None
    # With `fit`: the JPEG quality to render at instead of `quality` (the host's final one, so
    # an image with nothing to paint on it can leave as Chrome encoded it).
    fit_quality: int | None = Field(None, ge=1, le=100)
    # Secrets to paint over on top of password fields (the user's configure mask_selectors).
    mask_selectors: list[str] = Field([])
    # Send the pixels in a partial reply as soon as Chrome hands them over, before the probe
    # after them: the host shrinks them meanwhile, and the final reply (the verdict, with every
    # mask) then carries no data_url. Plain viewport and element captures by CDP only.
    early_pixels: bool = Field(False, json_schema_extra=TRUTHY)


class CaptureTile(Model):
    """One band of a tiled full-page capture."""

    data_url: str
    origin: Point  # viewport-relative CSS px of the tile's top-left
    css_size: Size


class CaptureResult(Model):
    # data:image/jpeg;base64,...; "" in a final reply whose pixels came early (early_pixels)
    data_url: str = ""
    attempt: int = 1  # which try took these pixels (a partial and its final reply share it)
    method: Literal["cdp", "visible"]
    quality: int | None = None  # the JPEG quality Chrome encoded data_url at
    url: str
    title: str
    tab_id: int
    device_pixel_ratio: float
    viewport: Size  # CSS px
    scroll: Point  # CSS px
    origin: Point  # viewport-relative CSS px of the image's top-left
    css_size: Size  # CSS size the image covers
    # Password fields and other secrets to black out, viewport-relative CSS px.
    masks: list[Rect] = Field(default_factory=list)
    unavailable: list[str] = Field(default_factory=list)  # capture modes not available, and why
    truncated: bool = False  # full page cut at max_height_css
    page_height: float | None = None
    tiles: list[CaptureTile] = Field(default_factory=list)  # full_page with `tile`, top to bottom
    # Stage stamps (epoch ms, *_at) and durations (ms) of the capture, for the benchmark.
    timings: dict[str, float] = Field(default_factory=dict)


class ElementInfo(Model):
    # Plain CSS for document.querySelector; "" inside shadow roots (see shadow_selector).
    selector: str
    tag: str
    role: str = ""
    name: str = ""
    text: str = ""
    bounds: Rect  # viewport-relative CSS px
    # clickable | editable | selectable | toggleable | navigable, or none / text for the rest.
    interaction_hint: str = Field("clickable", alias="interactionHint")
    in_viewport: bool = True
    # "host >>> inner" path for elements inside (open or closed) shadow roots.
    shadow_selector: str = ""
    # Playwright locator checked unique on the page, e.g. getByRole("button", { name: "Save" }).
    locator: str = ""
    # Only the states that apply: checked, pressed, expanded, selected, current, disabled,
    # required, readonly, focused.
    state: dict[str, bool | str] = Field(default_factory=dict)
    type: str | None = None  # input type (e.g. "password", which has no role)
    # The visible element drawn in place of a hidden control (e.g. a switch's label).
    proxy: str | None = None
    # Inside iframes: their selectors from the top page ([] in the top document).
    frame: list[str] = Field(default_factory=list)

    @property
    def target(self) -> str:
        """What resolves to this element in our own selector syntax (CSS or a >>> path)."""
        return self.shadow_selector if self.frame else (self.selector or self.shadow_selector)


class HiddenElement(Model):
    """A control that is there but covered (e.g. by a modal): not labelled."""

    selector: str
    role: str = ""
    name: str = ""
    hidden_by: str  # selector of the element on top of it
    frame: list[str] = Field(default_factory=list)  # iframes it is in, from the top page


class DiscoverArgs(TabArgs):
    """``discover``: find elements to label."""

    # target "custom" needs a selector.
    model_config = ConfigDict(
        json_schema_extra={
            "if": {"properties": {"target": {"const": "custom"}}, "required": ["target"]},
            "then": {"required": ["selector"]},
        }
    )

    target: Literal["interactive", "all_visible", "custom"] = "interactive"
    selector: str | None = None  # with target=custom (and then not blank); ignored otherwise
    max: int = Field(50, ge=1, le=500)
    include_offscreen: bool = Field(False, json_schema_extra=TRUTHY)
    # Line boxes of the visible text, for badge placement.
    text_rects: bool = Field(False, json_schema_extra=TRUTHY)
    # Hit-test each element for something drawn over it (then listed in `hidden`, not `elements`).
    # Off for reads that only want names and texts: the tests are most of a dense page's cost.
    covered: bool = Field(True, json_schema_extra=TRUTHY)
    # Read the page once a capture asked for at the same time has its pixels (its probe after
    # them): the capture gets the page's main thread first, which Chrome's capture waits for.
    after_frame: bool = Field(False, json_schema_extra=TRUTHY)
    # The token of the answer the caller holds (DiscoverResult.token): when the page would send
    # that answer again, it sends ``{"same": known, "reused": ...}`` instead (host/label_memory.py).
    known: str | None = None


class DiscoverResult(Model):
    url: str
    title: str
    ready_state: str
    device_pixel_ratio: float
    viewport: Size
    scroll: Point
    elements: list[ElementInfo]  # reading order, at most `max`
    total_found: int
    headings: list[dict[str, Any]] = Field(default_factory=list)
    forms: int = 0
    interactive_count: int = 0
    hidden: list[HiddenElement] = Field(default_factory=list)  # covered controls, up to 20
    notes: list[str] = Field(default_factory=list)  # crowding hints
    # Iframes on the page: frame (selectors from the top), bounds, url, labelled (count).
    frames: list[dict[str, Any]] = Field(default_factory=list)
    # With text_rects: line boxes of the visible text (viewport CSS px), for badge placement.
    text_rects: list[Rect] = Field(default_factory=list)
    # Every frame answered from its last read (the page had not changed since): page/unchanged.js.
    reused: bool = False
    # Names this answer (its frames' answers) for a later ``known`` (page/sent.js).
    token: str = ""


class PageInfoArgs(TabArgs):
    """``page_info``: a cheap summary of the page (what the tab says, where it cannot be read)."""


class ExpectedViewport(Model):
    width: float
    height: float
    dpr: float


class InputArgs(TabArgs):
    """``input``: act on the page like a user, through the debugger's trusted input events."""

    # Calls that do something (the second one whatever its action); x and y come together.
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"action": "scroll", "delta_y": 100},
                {"action": "click", "x": 10, "y": 20, "text": "hi", "key": "Enter"},
            ],
            "dependentRequired": {"x": ["y"], "y": ["x"]},
        }
    )

    action: Literal["click", "hover", "type", "keypress", "scroll"]
    x: float | None = None  # viewport CSS px (or a selector, not both)
    y: float | None = None
    from_scroll: Point | None = None  # the scroll x/y was measured at: follow the content
    selector: str | None = Field(None, pattern=NON_BLANK)
    expect_selector: str | None = None  # the label's element expected at x/y
    expect_url: str | None = None  # the page the screenshot showed (stale_screenshot if not)
    text: str | None = None  # type: what to insert
    clear: bool = Field(False, json_schema_extra=TRUTHY)  # type: select the field's text first
    key: str | None = None  # keypress: "Enter", "Control+A"...
    modifiers: list[str] = Field([])  # held during the action
    button: Literal["left", "right", "middle"] = "left"
    click_count: Literal[1, 2, 3] = 1
    delta_x: float = 0  # scroll: wheel deltas, CSS px
    delta_y: float = 0
    to: Literal["top", "bottom"] | ScrollToY | None = None  # scroll: where to
    debugger_idle_ms: float = Field(2000, ge=0, le=60_000)
    # The viewport the screenshot saw: pixel actions refuse another one (stale_screenshot).
    expect_viewport: ExpectedViewport | None = None
    screenshot_id: int | None = None  # named in a stale_screenshot message


class AimedArgs(TabArgs):
    """An action on one element, aimed like ``input``: a selector, or x/y in viewport CSS px (with
    the screenshot's scroll, URL and a label's selector)."""

    selector: str | None = Field(None, pattern=NON_BLANK)
    x: float | None = None
    y: float | None = None
    from_scroll: Point | None = None
    expect_selector: str | None = None
    expect_url: str | None = None
    # The viewport the screenshot saw: a pixel is refused in another one, a label re-aimed.
    expect_viewport: ExpectedViewport | None = None
    debugger_idle_ms: float = Field(2000, ge=0, le=60_000)


def _aimed(*examples: dict[str, Any]) -> ConfigDict:
    """A selector or x/y (both), not both: each example is one way to aim."""
    return ConfigDict(
        json_schema_extra={
            "examples": list(examples),
            "dependentRequired": {"x": ["y"], "y": ["x"]},
        }
    )


class SelectArgs(AimedArgs):
    """``select``: choose options of a native <select> (by value or label, or index), or of an
    ARIA combobox/listbox by name."""

    model_config = _aimed(
        {"selector": "#fruit", "values": ["kiwi"]}, {"x": 5, "y": 6, "indexes": [1]}
    )

    values: list[str] = Field([])
    indexes: list[Annotated[int, Field(ge=0)]] = Field([])


class UploadFile(Model):
    name: str
    mime: str
    size: int = Field(ge=0)  # bytes, in the order the parts hold them
    path: str  # where the host read it (recorded for the replay's setInputFiles)


class UploadPartArgs(ExtensionArgs):
    """``upload_part``: one base64 part of an upload's bytes (a native message is at most 1 MB)."""

    upload_id: str = Field(pattern=NON_BLANK)
    index: int = Field(ge=0)
    data: str


class UploadArgs(AimedArgs):
    """``upload``: set the files whose bytes came in ``parts`` on an <input type=file>."""

    model_config = _aimed(
        {"selector": "#f", "upload_id": "u1", "parts": 1, "files": [
            {"name": "a.txt", "mime": "text/plain", "size": 3, "path": "/tmp/a.txt"}]},
        {"x": 5, "y": 6, "upload_id": "u1", "parts": 0, "files": [
            {"name": "e.txt", "mime": "text/plain", "size": 0, "path": "/tmp/e.txt"}]},
    )  # fmt: skip

    upload_id: str = Field(pattern=NON_BLANK)
    parts: int = Field(ge=0)
    files: list[UploadFile] = Field(min_length=1)


class DragTo(Model):
    """Where a drag ends: a selector, or x/y in viewport CSS px (with a label's selector)."""

    selector: str | None = Field(None, pattern=NON_BLANK)
    x: float | None = None
    y: float | None = None
    expect_selector: str | None = None


class DragArgs(AimedArgs):
    """``drag``: press at the target, move in ``steps`` to ``to``, release."""

    model_config = _aimed(
        {"selector": "#card", "to": {"selector": "#done"}},
        {"x": 5, "y": 6, "to": {"x": 50, "y": 6}},
    )

    to: DragTo
    steps: int = Field(10, ge=1, le=100)


class WaitForArgs(TabArgs):
    """``wait_for``: until one condition holds (or, with gone, stops holding), at most wait_ms."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"text": "Saved"}, {"selector": "#x"}, {"url": "/done"}, {"network": True}]
        }
    )

    text: str | None = Field(None, pattern=NON_BLANK)
    selector: str | None = Field(None, pattern=NON_BLANK)
    url: str | None = Field(None, pattern=NON_BLANK)  # a substring, or a glob with *
    network: bool = False  # until no request is in flight for 500 ms
    gone: bool = False
    wait_ms: int = Field(5000, ge=0, le=60_000)


class ElementAtArgs(TabArgs):
    """``element_at``: what is under a viewport point, without acting."""

    x: float
    y: float


class ResolveArgs(TabArgs):
    """``resolve``: where an element is now, and the point an action would aim at."""

    selector: str = Field(pattern=NON_BLANK)
    scroll_into_view: bool = Field(False, json_schema_extra=TRUTHY)


class CdpArgs(TabArgs):
    """``cdp``: one raw DevTools Protocol command (the host sends it only when the user allowed)."""

    method: str = Field(pattern=r"^[A-Z][A-Za-z]*\.[a-z][A-Za-z]*$")
    params: dict[str, Any] | None = None
    allow: Literal[True]  # an explicit yes, so no caller reaches it by accident
    debugger_idle_ms: float = 2000


class CdpReply(Model):
    method: str
    tab_id: int
    result: dict[str, Any]


class RecordConfigArgs(ExtensionArgs):
    """``record_config``: network capture on or off for every page (null: leave it)."""

    network: bool | None = None


class RecordConfigReply(Model):
    network: bool


class DialogArgs(TabArgs):
    """``dialog``: accept or dismiss the JavaScript dialog open in the tab."""

    accept: bool
    prompt_text: str | None = None  # a prompt's answer (accepting without one keeps its default)


class DialogReply(Model):
    action: Literal["dialog"]
    accepted: bool
    dialog: DialogInfo | None  # the dialog answered (None: Chrome never reported it)
    prompt_text: str | None
    url: str
    title: str
    open_dialog: DialogInfo | None = None  # the next one, opened right after
    notes: list[str] = Field(default_factory=list)


class ErrorsArgs(TabArgs):
    """``errors``: the page errors recorded in the tab."""

    clear: bool = Field(False, json_schema_extra=TRUTHY)  # forget them once read


class ErrorsReply(Model):
    errors: list[dict[str, Any]]


class EmulateArgs(TabArgs):
    """``emulate``: change the tab's emulation (absent/null: keep; ``reset``: drop it all)."""

    preset: str | None = None  # named in the reply; the host sends the preset's settings too
    width: int | None = Field(None, ge=MIN_SIZE, le=MAX_SIZE)
    height: int | None = Field(None, ge=MIN_SIZE, le=MAX_SIZE)
    device_scale_factor: float | None = Field(None, gt=0, le=MAX_SCALE)
    mobile: bool | None = None
    touch: bool | None = None
    user_agent: str | None = None
    color_scheme: ColorScheme | None = None
    reduced_motion: ReducedMotion | None = None
    reset: bool = False


class EmulateReply(Model):
    tab_id: int
    url: str = ""
    emulation: Emulation
    page: PageMedia | None = None  # None: the page could not be asked (between documents)
    headed: bool = False  # a window the user sees shows it


class TabCloseArgs(TabArgs):
    """``tab_close``: close a tab (default the tracked one); the tracked tab moves to another."""


class TabCloseReply(Model):
    closed: TabInfo
    tab: TabInfo | None = None  # the tracked tab now


class NetworkArgs(TabArgs):
    """``network``: the tab's requests since ``since_ms`` (epoch ms), or the one numbered ``id``."""

    since_ms: float | None = None
    id: int | None = None


class NetworkReply(Model):
    tab_id: int
    requests: list[NetworkRequest]


class ConsoleArgs(TabArgs):
    """``console``: the tab's console warnings and logs (errors are ``errors``)."""


class ConsoleMessage(Model):
    level: Literal["warning", "info", "log", "debug"]
    message: str
    source: str = ""
    line: int = 0
    column: int = 0
    time: float  # epoch ms


class ConsoleReply(Model):
    messages: list[ConsoleMessage]


# Every command the host sends the extension: its arguments, and its reply where one is declared
# (input, element_at, resolve and page_info answer with what the page library returns).
COMMANDS: dict[str, tuple[type[ExtensionArgs], type[Model] | None]] = {
    "ping": (PingArgs, PingReply),
    "list_tabs": (ListTabsArgs, ListTabsReply),
    "track": (TrackArgs, TabReply),
    "navigate": (NavigateArgs, TabReply),
    "open_tab": (OpenTabArgs, TabReply),
    "close_tab": (CloseTabArgs, CloseTabReply),
    "capture": (CaptureArgs, CaptureResult),
    "discover": (DiscoverArgs, DiscoverResult),
    "page_info": (PageInfoArgs, None),
    "input": (InputArgs, None),
    "element_at": (ElementAtArgs, None),
    "resolve": (ResolveArgs, None),
    "select": (SelectArgs, None),
    "upload_part": (UploadPartArgs, None),
    "upload": (UploadArgs, None),
    "drag": (DragArgs, None),
    "wait_for": (WaitForArgs, None),
    "cdp": (CdpArgs, CdpReply),
    "record_config": (RecordConfigArgs, RecordConfigReply),
    "dialog": (DialogArgs, DialogReply),
    "errors": (ErrorsArgs, ErrorsReply),
    "emulate": (EmulateArgs, EmulateReply),
    "tab_close": (TabCloseArgs, TabCloseReply),
    "network": (NetworkArgs, NetworkReply),
    "console": (ConsoleArgs, ConsoleReply),
}
