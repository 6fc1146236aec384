"""Generation tools over the recorded session: ``get_reproduction_script``, ``generate_test`` and
``generate_bug_report``. The host keeps the session (timeline, screenshot buffer); the code and
Markdown come from ``shotbridge.generate``, which is pure and unit-tested on its own. Page text in
the tools' own framing goes through ``generate.encode`` too (a fence no script can close)."""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ContentBlock, ToolAnnotations
from pydantic import Field

from shotbridge.generate import masks, playwright, report
from shotbridge.generate.encode import md_fence, md_text
from shotbridge.generate.steps import Environment, Session
from shotbridge.mcp_server import content, session, shots
from shotbridge.mcp_server.state import REQUEST_TIMEOUT_S, ServerState

log = logging.getLogger(__name__)

# Screenshots returned as image blocks with a reproduction script: full JPEGs while they fit.
IMAGES_BUDGET = 400_000


def _annotations(title: str) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    )


EMPTY = (
    "Nothing has been recorded yet in this session: the timeline holds the tracked tab's "
    "navigations, clicks, typing, errors and (with configure network=true) requests from when "
    "the browser connected. Use the page (or interact), then ask again."
)


async def _environment(state: ServerState) -> Environment:
    """The browser and page the session ran in (a nicety: what cannot be read is left out)."""
    found: dict[str, Any] = {}
    for cmd, keys in (
        ("status", ("user_agent", "extension_version")),
        ("page_info", ("viewport", "device_pixel_ratio")),
    ):
        try:
            got = await state.connection.request(cmd, {}, timeout=REQUEST_TIMEOUT_S)
        except Exception as exc:  # the environment is a nicety; the timeline is what matters
            log.info("environment: %s unavailable: %s", cmd, exc)
            continue
        found.update({k: got[k] for k in keys if got.get(k) is not None})
    return Environment.model_validate(found)


async def load(state: ServerState, images: str | None = None) -> Session:
    export = await session.timeline(state)
    environment = await _environment(state)
    full = await session.screenshot_images(state, "full") if images in ("full", "both") else {}
    thumbs = (
        await session.screenshot_images(state, "thumbnail")
        if images in ("thumbnail", "both")
        else {}
    )
    return Session.from_export(export, environment=environment, images=full, thumbnails=thumbs)


async def _finish(state: ServerState, blocks: list[ContentBlock], tool: str) -> CallToolResult:
    if state.settings.screenshot_mode == "on":
        blocks += await shots.auto_blocks(state)
    return content.result(blocks, tool=tool)


def _recorded(s: Session) -> bool:
    return any(e.type in ("nav", "action") for e in s.entries)


def register(server: MCPServer, state: ServerState) -> None:
    _register_script(server, state)
    _register_test(server, state)
    _register_report(server, state)


def _register_script(server: MCPServer, state: ServerState) -> None:
    @server.tool(
        name="get_reproduction_script",
        description="A Playwright script (node, plain `playwright`) replaying the tracked tab's "
        "recording with resilient locators; password values are never recorded. "
        "include_screenshots adds the buffered screenshots too; include_fixtures needs configure "
        'network=true first. module=\'esm\' when package.json says "type": "module".',
        annotations=_annotations("Reproduction script"),
        structured_output=False,
    )
    async def get_reproduction_script(
        include_screenshots: Annotated[
            bool, Field(description="page.screenshot() after each step.")
        ] = False,
        include_fixtures: Annotated[
            bool, Field(description="Serve the recorded GET responses.")
        ] = False,
        module: Annotated[
            Literal["cjs", "esm"], Field(description="cjs: require; esm: import.")
        ] = "cjs",
    ) -> CallToolResult:
        s = await load(state, "both" if include_screenshots else None)
        if not _recorded(s):
            return content.result([content.text(EMPTY)], tool="get_reproduction_script")
        code = playwright.reproduction_script(
            s,
            include_screenshots=include_screenshots,
            include_fixtures=include_fixtures,
            module=module,
        )
        blocks: list[ContentBlock] = [content.text(md_fence(code, "js"))]
        if include_screenshots:
            blocks += _step_images(s)
        return await _finish(state, blocks, "get_reproduction_script")


def _register_test(server: MCPServer, state: ServerState) -> None:
    @server.tool(
        name="generate_test",
        description="A @playwright/test spec replaying the recording (ESM + TypeScript; "
        "module='cjs', language='js' for older projects). assert_visual: toHaveScreenshot after "
        "each change; assert_no_errors: fail when recorded or new errors return. "
        "include_fixtures serves the recorded GET responses; fixtures='seed' posts the data that "
        "existed instead.",
        annotations=_annotations("Generate a Playwright test"),
        structured_output=False,
    )
    async def generate_test(
        assert_visual: Annotated[bool, Field(description="toHaveScreenshot assertions.")] = True,
        include_fixtures: Annotated[
            bool, Field(description="Serve the recorded GET responses.")
        ] = False,
        mask_dynamic: Annotated[bool, Field(description="Mask what changes on its own.")] = True,
        assert_no_errors: Annotated[
            bool, Field(description="Fail on recorded or new errors.")
        ] = True,
        module: Annotated[
            Literal["esm", "cjs"], Field(description="esm: import; cjs: require.")
        ] = "esm",
        language: Annotated[Literal["ts", "js"], Field(description="ts (.spec.ts) or js.")] = "ts",
        fixtures: Annotated[
            Literal["routes", "seed", "none"] | None,
            Field(description="routes (default), seed or none."),
        ] = None,
    ) -> CallToolResult:
        s = await load(state)
        if not _recorded(s):
            return content.result([content.text(EMPTY)], tool="generate_test")
        sampled = await _sampled(state) if assert_visual and mask_dynamic else {}
        code = playwright.generate_test_spec(
            s,
            assert_visual=assert_visual,
            include_fixtures=include_fixtures,
            mask_dynamic=mask_dynamic,
            assert_no_errors=assert_no_errors,
            module=module,
            language=language,
            fixtures=fixtures,
            sampled_dynamic=sampled,
        )
        text = f"{md_fence(code, language)}\n{_spec_note(language, module)}"
        return await _finish(state, [content.text(text)], "generate_test")


async def _sampled(state: ServerState) -> dict[str, set[str]]:
    """What the live page shows moving, for the spec's masks ({} when there is no page)."""
    try:
        return await masks.sample(
            lambda cmd, args: state.connection.request(cmd, args, timeout=REQUEST_TIMEOUT_S)
        )
    except Exception as exc:  # no page to sample: the recorded observations remain
        log.info("mask sampling unavailable: %s", exc)
        return {}


def _spec_note(language: str, module: str) -> str:
    ext = "ts" if language == "ts" else ("mjs" if module == "esm" else "cjs")
    return (
        f"Save as e.g. tests/session.spec.{ext}; run `npx playwright test` (the first run "
        "with --update-snapshots writes the baseline screenshots)."
    )


def _register_report(server: MCPServer, state: ServerState) -> None:
    @server.tool(
        name="generate_bug_report",
        description="A Markdown bug report of the recording: URL, time, severity, numbered "
        "steps with their screenshots embedded (thumbnails past 1 MB), the error, "
        "Expected/Actual, environment and the reproduction script.",
        annotations=_annotations("Generate a bug report"),
        structured_output=False,
    )
    async def generate_bug_report() -> CallToolResult:
        s = await load(state, "both")
        if not _recorded(s):
            return content.result([content.text(EMPTY)], tool="generate_bug_report")
        return await _finish(state, [content.text(report.bug_report(s))], "generate_bug_report")


def _step_images(s: Session) -> list[ContentBlock]:
    """The buffered screenshot of each step, full while under budget, then thumbnails."""
    out: list[ContentBlock] = []
    used = 0
    for step, sid in playwright.screenshots_for_steps(s):
        jpeg = s.images.get(sid)
        kind = "screenshot"
        if jpeg is None or used + len(jpeg) > IMAGES_BUDGET:
            jpeg, kind = s.thumbnails.get(sid), "thumbnail"
        if jpeg is None:
            continue
        used += len(jpeg)
        what = md_text(step.describe(), 200)
        out.append(content.text(f"step-{step.index}: {kind} {sid} — {what}"))
        out.append(content.image(jpeg))
    return out
