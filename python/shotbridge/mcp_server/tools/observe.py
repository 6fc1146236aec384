"""``observe``: page structure, console errors and messages, network requests or open tabs;
optionally labelled pixels."""

from __future__ import annotations

from copy import copy
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ContentBlock, ToolAnnotations
from pydantic import Field

from shotbridge.mcp_server import console_view, content, network_view, session, shots
from shotbridge.mcp_server.failures import invalid_selector, to_tool_error
from shotbridge.mcp_server.label_map import compact_map
from shotbridge.mcp_server.state import REQUEST_TIMEOUT_S, ServerState
from shotbridge.mcp_server.tools import screenshots
from shotbridge.wire.errors import CommandError, ErrorCode
from shotbridge.wire.extension import ConsoleReply, NetworkArgs, NetworkReply
from shotbridge.wire.screenshot import Annotation, PageFacts, ScreenshotResult
from shotbridge.wire.timeline import NetworkEntry

WHATS = ("page", "errors", "console", "network", "tabs", "screenshots")
TARGETS = ("interactive", "all_visible", "custom")
TEXT_MAX = 100

DESCRIPTION = """\
Look at the tracked tab; start here. what="page": URL, title, viewport, headings, counts \
(include_offscreen=true lists controls); "errors"; "console": messages with level; "network": \
the session's requests, failed first (request_id=N: headers, body); "tabs". \
annotate_screenshot=true (if structure is not enough): JPEG with numbered labels mapped to role, \
name, selector, for interact(label=N)."""


ANNOTATIONS = ToolAnnotations(
    title="Observe the browser",
    read_only_hint=True,
    destructive_hint=False,
    idempotent_hint=True,
    open_world_hint=True,
)

# The tool's parameters, each with what the model reads about it.
What = Annotated[
    str,
    Field(
        description="screenshots: the session's timeline (last 20 as screenshot://{id}).",
        json_schema_extra={"enum": list(WHATS)},
    ),
]
AnnotateScreenshot = Annotated[bool, Field(description="page: labelled JPEG.")]
AnnotationTarget = Annotated[
    str,
    Field(
        description="What to label (custom: annotation_selector).",
        json_schema_extra={"enum": list(TARGETS)},
    ),
]
AnnotationSelector = Annotated[str | None, Field(description="CSS selector of what to label.")]
MaxAnnotations = Annotated[
    int, Field(ge=1, le=500, description="Most labels, in reading order (a map line each).")
]
IncludeOffscreen = Annotated[bool, Field(description="page: list controls.")]
IncludeThumbnails = Annotated[bool, Field(description="screenshots: add their thumbnails.")]
Filter = Annotated[
    str | None,
    Field(description="network: failed, 4xx, 404, URL part; console: level or text."),
]
RequestId = Annotated[int | None, Field(description="network: one in full.")]
MapForm = Annotated[
    Literal["compact", "full"],
    Field(description="compact: a line per label; full: JSON with bounds and selectors."),
]


def register(server: MCPServer, state: ServerState) -> None:
    @server.tool(
        name="observe", description=DESCRIPTION, annotations=ANNOTATIONS, structured_output=False
    )
    async def observe(
        what: What = "page",
        annotate_screenshot: AnnotateScreenshot = False,
        annotation_target: AnnotationTarget = "interactive",
        annotation_selector: AnnotationSelector = None,
        max_annotations: MaxAnnotations = 50,
        include_offscreen: IncludeOffscreen = False,
        include_thumbnails: IncludeThumbnails = False,
        map: MapForm = "compact",
        filter: Filter = None,
        request_id: RequestId = None,
    ) -> CallToolResult:
        if what not in WHATS:
            raise ToolError(f"Unknown what={what!r}. Valid values: {', '.join(WHATS)}.")
        if what == "network":
            return content.result([await _network(state, filter, request_id)], tool="observe")
        if request_id is not None or (filter is not None and what != "console"):
            raise ToolError(
                "filter works with what='network' or 'console'; request_id only with 'network'."
            )
        if what == "console":
            return content.result(
                [content.json_text(await _console(state, filter))], tool="observe"
            )
        if annotate_screenshot:
            if what != "page":
                raise ToolError("annotate_screenshot works only with what='page'.")
            full = map == "full"
            return await _annotated(
                state, annotation_target, annotation_selector, max_annotations, full
            )
        blocks = await _look(state, what, include_offscreen, include_thumbnails)
        if state.settings.auto_screenshot_for(what):
            blocks += await shots.auto_blocks(state)
        return content.result(blocks, tool="observe")


async def _look(
    state: ServerState, what: str, include_offscreen: bool, include_thumbnails: bool
) -> list[ContentBlock]:
    """The text answer for ``what`` (no labelled image)."""
    if what == "page":
        page = await _page(state)
        if include_offscreen and not page.get("restricted"):
            page.update(await _elements(state))
        return [content.json_text(page)]
    if what == "errors":
        return [content.json_text(await _errors(state))]
    if what == "screenshots":
        return await screenshots.observe_blocks(state, include_thumbnails)
    return [content.json_text(await _tabs(state))]


def _count(value: Any) -> int:
    """The extension may send a count or the list itself."""
    return len(value) if isinstance(value, list | tuple) else int(value or 0)


async def _page(state: ServerState, image_asked: bool = False) -> dict[str, Any]:
    try:
        info = await _page_info(state)
    except CommandError as exc:
        if exc.code != ErrorCode.RESTRICTED_PAGE:
            raise to_tool_error(exc) from exc
        return await _restricted_page(state, image_asked)
    except Exception as exc:
        raise to_tool_error(exc) from exc
    if info.get("restricted"):
        return _unscriptable(info, image_asked)
    page = {
        "url": info.get("url"),
        "title": info.get("title"),
        "viewport": info.get("viewport"),
        "readyState": info.get("ready_state"),
        "headings": info.get("headings", []),
        "form_count": _count(info.get("forms")),
        "interactive_count": _count(info.get("interactive_count")),
    }
    if note := _loading_note(info.get("ready_state")):
        page["note"] = note
    return page


async def _restricted_page(state: ServerState, image_asked: bool = False) -> dict[str, Any]:
    """An extension that refuses page_info on such pages: answer with what the tab list knows."""
    tabs = await _tabs(state)
    tab = next((t for t in tabs["tabs"] if t.get("tracked")), None) or {}
    url = tab.get("url") or ""
    info = {"url": url, "title": tab.get("title"), "blank": url in ("", "about:blank")}
    return {**_unscriptable(info, image_asked), "tab_id": tab.get("id")}


async def _page_info(state: ServerState) -> dict[str, Any]:
    """The extension's page_info: answers at once, even while the page is still loading."""
    return await state.connection.request("page_info", None, timeout=REQUEST_TIMEOUT_S)


async def _unscriptable_page(state: ServerState) -> dict[str, Any] | None:
    """about:blank or chrome://…, when a capture failed there: the page as far as it is known."""
    try:
        page = await _page(state, image_asked=True)
    except ToolError:
        return None
    return page if page.get("restricted") else None


def _loading_note(ready_state: str | None) -> str | None:
    if ready_state != "loading":
        return None
    return (
        'The page is still loading (readyState "loading"): this is what has arrived so far; '
        "observe again for the rest."
    )


def _unscriptable(info: dict[str, Any], image_asked: bool = False) -> dict[str, Any]:
    """about:blank or a browser page (chrome://…): what the tab says, and why there is no more."""
    url = info.get("url") or ""
    page: dict[str, Any] = {
        "url": url,
        "title": info.get("title"),
        "viewport": info.get("viewport"),
        "readyState": info.get("ready_state"),
        "restricted": True,
    }
    if info.get("blank"):
        page.update(headings=[], form_count=0, interactive_count=0)
        note = f"{url or 'The tab'} is an empty page: navigate to a URL (interact action=navigate)."
    else:
        note = (
            f"{url} is a browser page: Chrome does not let extensions read its content, so only "
            "its URL and title are known. Switch to a web page or navigate to a URL."
        )
    if image_asked:
        note += " No image can be taken of a browser page or about:blank."
    page["note"] = note
    return page


async def _elements(state: ServerState) -> dict[str, Any]:
    """Interactive elements in reading order, on screen or not (discover's include_offscreen)."""
    found = await session.request(
        state, "discover", {"target": "interactive", "max": 100, "include_offscreen": True}
    )
    elements = [
        {
            "selector": e["selector"],
            "tag": e.get("tag", ""),
            "role": e.get("role", ""),
            "name": e.get("name", ""),
            "text": (e.get("text") or "")[:TEXT_MAX],
            "bounds": e.get("bounds"),
            "in_viewport": e.get("in_viewport", True),
            # Inside an iframe: the frame chain and the >>> path interact takes from the top.
            **({k: e[k] for k in ("frame", "shadow_selector")} if e.get("frame") else {}),
        }
        for e in found.get("elements", [])
    ]
    return {
        "elements": elements,
        "elements_total": found.get("total_found", len(elements)),
        "scroll": found.get("scroll"),
    }


async def _errors(state: ServerState) -> dict[str, Any]:
    found = await session.request(state, "errors")
    errors = found.get("errors", [])
    return {
        "count": len(errors),
        "errors": errors,  # oldest first, newest last
        **({"dropped": found["dropped"]} if found.get("dropped") else {}),
    }


async def _network(state: ServerState, flt: str | None, rid: int | None) -> ContentBlock:
    """The tracked tab's requests since the session began, or one of them in full."""
    args = NetworkArgs(since_ms=network_view.STARTED_MS, id=rid)
    found = await session.ask(state, "network", args, NetworkReply)
    if rid is None:
        return content.json_text(network_view.listing(found.requests, flt))
    recorded = [e for e in (await session.timeline(state)).entries if isinstance(e, NetworkEntry)]
    return content.json_text(network_view.detail(found.requests, rid, recorded))


async def _console(state: ServerState, flt: str | None) -> dict[str, Any]:
    """Errors and the other console messages of the tracked tab, with their level, in order."""
    errors = (await session.request(state, "errors")).get("errors", [])
    logs = ConsoleReply.model_validate(await session.request(state, "console")).messages
    return console_view.listing(errors, logs, flt)


async def _tabs(state: ServerState) -> dict[str, Any]:
    found = await session.request(state, "list_tabs")
    tabs = found.get("tabs", found if isinstance(found, list) else [])
    tracked = next((t.get("id") for t in tabs if t.get("tracked")), None)
    return {"tracked_tab": tracked, "tabs": tabs}


def _check_target(target: str, selector: str | None) -> None:
    if target not in TARGETS:
        raise ToolError(
            f"Unknown annotation_target={target!r}. Valid values: {', '.join(TARGETS)}."
        )
    if target == "custom" and not (selector and selector.strip()):
        raise invalid_selector(None, "annotation_target='custom' needs annotation_selector")
    if selector and target != "custom":
        raise ToolError("annotation_selector is used only with annotation_target='custom'.")


async def _annotated(
    state: ServerState, target: str, selector: str | None, max_annotations: int, full: bool
) -> CallToolResult:
    _check_target(target, selector)
    args = shots.screenshot_request(
        state,
        annotate=True,
        target=target,
        annotation_selector=selector,
        max_annotations=max_annotations,
    )
    # The labels carry readyState; nothing else runs in the page beside the capture (it would
    # hold the page's main thread, which Chrome's capture waits for). A page still streaming is
    # labelled as far as it has arrived.
    try:
        shot = await shots.explicit(state, args, selector=selector)
    except ToolError:
        if unscriptable := await _unscriptable_page(state):
            return content.result(
                [content.json_text({"page": unscriptable, "annotations": []})], tool="observe"
            )
        raise
    if isinstance(shot, CallToolResult):  # the cooldown refused it
        return shot
    got_at = content.epoch_ms()
    mapping = _label_map(shot, shot.page.ready_state if shot.page else None)
    # The text alone says what the image is (URL, size, masks), for clients that drop images.
    text = content.json_text(mapping) if full else content.text(compact_map(mapping))
    blocks = content.image_beside(shot, text)
    content.note_stages(shot, got_at, tool="observe")
    return content.result(blocks, tool="observe")


def _label_map(shot: ScreenshotResult, ready: str | None) -> dict[str, Any]:
    """The page, its labels and the image's facts, as the annotated observe answers them."""
    annotations = [_annotation(a) for a in shot.annotations]
    mapping: dict[str, Any] = {
        "page": {
            "url": shot.url,
            "title": shot.title,
            "viewport": shot.viewport.model_dump(),
            "readyState": ready,
            **_page_facts(shot.page),
        },
        "annotations": annotations,
        "total_found": shot.total_found,
        "image": content.image_facts(shot),
    }
    # Covered controls (with what covers them), frames and crowding hints: only when there are any.
    hidden = [h.model_dump() for h in shot.hidden]
    for key, value in (("hidden", hidden), ("frames", shot.frames), ("notes", shot.notes)):
        if value:
            mapping[key] = value
    if note := _loading_note(ready):
        mapping["notes"] = [note, *mapping.get("notes", [])]
    return mapping


def _page_facts(page: PageFacts | None) -> dict[str, Any]:
    """Headings and counts the annotated screenshot found, named as observe(page) names them."""
    if not page:
        return {}
    return {
        "headings": page.headings,
        "form_count": _count(page.forms),
        "interactive_count": _count(page.interactive_count),
    }


# Fields a label carries only when they say something (empty shadow path, no proxy, no frame).
OPTIONAL = ("shadow_selector", "locator", "state", "type", "proxy", "frame")


def _annotation(a: Annotation) -> dict[str, Any]:
    b = a.bounds
    out = {
        "label": a.label,
        "selector": a.selector,
        "tag": a.tag,
        "role": a.role,
        "name": a.name,
        "text": a.text[:TEXT_MAX],
        "bounds": {"x": b.x, "y": b.y, "width": b.width, "height": b.height},
        "interactionHint": a.interactionHint or "clickable",
        "in_viewport": a.in_viewport,
    }
    # Read, not dumped: a model_dump per label was most of this map's cost at 50 labels.
    extra = {k: getattr(a, k) for k in OPTIONAL}
    out.update({k: copy(v) for k, v in extra.items() if v})
    return out
