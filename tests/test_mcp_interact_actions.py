"""MCP wiring of interact's input actions and raw CDP, capture modes, observe offscreen.

The bus is a FakeLink: these tests check what the tools send to the host and how they present
its answers; tests/e2e/test_interact.py drives the real thing in Chromium.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import mcp
import pytest
from mcp.types import CallToolResult, ImageContent, TextContent
from shotbridge.mcp_server import Connection, ServerState, build_server
from shotbridge.mcp_server.ratelimit import ScreenshotBudget
from shotbridge.wire.geometry import Point
from shotbridge.wire.screenshot import Tile

from tests.mcp_fakes import FakeClock, FakeLink, jpeg, screenshot_result

Scenario = Callable[[mcp.Client], Awaitable[None]]

CLICK_WITH_SHOT = {"action": "click", "selector": "#save", "include_screenshot": True}
HIT = {"tag": "button", "role": "button", "name": "Save", "selector": "#save", "text": "Save"}


def acted(args: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "action": args["action"],
        "hit": HIT,
        "point": {"x": 140, "y": 70},
        "url": "http://127.0.0.1:8000/page.html",
        "title": "Fixture page",
        "scroll": {"x": 0, "y": 0},
        "navigated": False,
    }
    if args.get("include_screenshot"):
        out["screenshot"] = {**screenshot_result({}), "screenshot_id": 9}
    if args["action"] == "cdp":
        if args["method"] == "Page.captureScreenshot":
            return {
                "method": args["method"],
                "result": {},
                "image": {
                    "jpeg": jpeg(),
                    "width": 64,
                    "height": 40,
                    "bytes": 1000,
                    "source_width": 128,
                    "source_height": 80,
                },
            }
        return {"method": args["method"], "result": {"result": {"value": 3}}}
    return out


class Harness:
    def __init__(self, *, allow_cdp: bool = False, **handlers: Any) -> None:
        self.link = FakeLink(**{"interact": acted, **handlers})

        async def factory() -> FakeLink:
            return self.link

        self.state = ServerState(
            connection=Connection(factory),
            budget=ScreenshotBudget(clock=FakeClock()),
            allow_cdp=allow_cdp,
        )
        self.server = build_server(self.state)

    def run(self, scenario: Scenario) -> None:
        async def main() -> None:
            async with mcp.Client(self.server) as client:
                await scenario(client)

        asyncio.run(main())

    def sent(self, cmd: str) -> list[dict[str, Any]]:
        return [a for c, a in self.link.calls if c == cmd]


def texts(result: CallToolResult) -> list[str]:
    return [b.text for b in result.content if isinstance(b, TextContent)]


def test_click_by_label_goes_to_the_host_and_says_what_was_hit() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("interact", {"action": "click", "label": 3, "click_count": 2})
        assert not r.is_error
        first = texts(r)[0]
        assert first.startswith('Clicked at CSS (140, 70); hit button "Save" (#save).')
        facts = json.loads(first.splitlines()[-1])
        assert facts["hit"]["selector"] == "#save"

    h.run(scenario)
    [sent] = h.sent("interact")
    assert sent["label"] == 3 and sent["click_count"] == 2
    assert sent["allow_cdp"] is False and "include_screenshot" not in sent


def test_pixels_type_keypress_and_scroll_arguments() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        for args in (
            {"action": "type", "x": 10, "y": 20, "screenshot_id": 4, "text": "hi", "clear": True},
            {"action": "keypress", "key": "Control+A"},
            {"action": "scroll", "to": "bottom"},
            {"action": "scroll", "delta_y": 300},
            {"action": "hover", "selector": "#save"},
        ):
            assert not (await c.call_tool("interact", args)).is_error

    h.run(scenario)
    sent = h.sent("interact")
    assert sent[0]["x"] == 10 and sent[0]["screenshot_id"] == 4 and sent[0]["clear"] is True
    assert sent[1]["key"] == "Control+A"
    assert sent[2]["to"] == "bottom"
    assert sent[3]["delta_y"] == 300
    assert sent[4]["selector"] == "#save"


def test_include_screenshot_adds_an_image_and_follows_an_explicit_cooldown() -> None:
    h = Harness()
    h.state.budget.explicit_cooldown = 5.0  # shotctl mcp --cooldown 5

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool(
            "interact", {"action": "click", "selector": "#save", "include_screenshot": True}
        )
        assert [b.type for b in r.content] == ["text", "image", "text"]
        assert "screenshot_id 9" in texts(r)[1]
        # A second one within the cooldown acts but says why there is no image.
        r = await c.call_tool(
            "interact", {"action": "click", "selector": "#save", "include_screenshot": True}
        )
        assert not r.is_error and "Screenshot not included" in texts(r)[-1]

    h.run(scenario)
    sent = h.sent("interact")
    assert sent[0]["include_screenshot"] is True and "mask_selectors" in sent[0]["screenshot"]
    assert "include_screenshot" not in sent[1]


def test_stale_screenshot_is_reported_as_a_tool_error() -> None:
    from shotbridge.wire.errors import CommandError

    err = CommandError("stale_screenshot", "The tab now shows http://b/; take a fresh screenshot.")
    h = Harness(interact=err)

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("interact", {"action": "click", "x": 1, "y": 2})
        assert r.is_error and "take a fresh screenshot" in texts(r)[0]

    h.run(scenario)


def test_cdp_is_refused_without_allow_cdp() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("interact", {"action": "cdp", "method": "Runtime.evaluate"})
        assert r.is_error and "--allow-cdp" in texts(r)[0]

    h.run(scenario)
    assert h.sent("interact") == []


def test_cdp_screenshot_comes_back_as_an_image() -> None:
    h = Harness(allow_cdp=True)

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("interact", {"action": "cdp", "method": "Page.captureScreenshot"})
        assert [b.type for b in r.content] == ["image", "text"]
        assert isinstance(r.content[0], ImageContent)
        r = await c.call_tool(
            "interact",
            {"action": "cdp", "method": "Runtime.evaluate", "params": {"expression": "1+2"}},
        )
        assert texts(r) == ['Runtime.evaluate → {"result": {"value": 3}}']

    h.run(scenario)
    assert all(a["allow_cdp"] is True for a in h.sent("interact"))


def test_full_page_tiles_are_separate_images_each_with_text() -> None:
    def tiled(args: dict[str, Any]) -> dict[str, Any]:
        shot = {**screenshot_result(args), "screenshot_id": 1}
        shot["tiles"] = [
            Tile(
                screenshot_id=1 + i,
                jpeg=jpeg(),
                thumbnail=jpeg(),
                width=1280,
                height=1568 if i < 3 else 1264,
                bytes=1000,
                quality=60,
                css_to_output_scale=1.0,
                origin=Point(x=0, y=0),
                css_y=1568.0 * i,
                css_height=1568.0 if i < 3 else 1264.0,
            ).model_dump()
            for i in range(4)
        ]
        return shot

    h = Harness(screenshot=tiled)

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("capture_screenshot", {"full_page": True, "scroll": "top"})
        assert [b.type for b in r.content] == ["text"] + ["image", "text"] * 4
        assert "4 tiles" in texts(r)[0]
        assert texts(r)[1].startswith("Tile 1/4: page CSS y 0–1568")
        assert "screenshot_id 4" in texts(r)[4]

    h.run(scenario)
    [sent] = h.sent("screenshot")
    assert sent["full_page"] is True and sent["scroll"] == "top"


def test_capture_scroll_forms() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        for scroll in (1200, "800", "#footer"):
            await c.call_tool("capture_screenshot", {"scroll": scroll})
            h.state.budget.clock.advance(10)  # type: ignore[attr-defined]

    h.run(scenario)
    assert [a["scroll"] for a in h.sent("screenshot")] == [
        {"y": 1200.0},
        {"y": 800.0},
        {"selector": "#footer"},
    ]


def test_observe_page_include_offscreen_lists_elements() -> None:
    found = {
        "elements": [
            {
                "selector": "#a",
                "tag": "button",
                "role": "button",
                "name": "A",
                "text": "A",
                "bounds": {"x": 0, "y": 0, "width": 10, "height": 10},
                "in_viewport": True,
            },
            {
                "selector": "#z",
                "tag": "a",
                "role": "link",
                "name": "Z",
                "text": "Z",
                "bounds": {"x": 0, "y": 5000, "width": 10, "height": 10},
                "in_viewport": False,
            },
        ],
        "total_found": 2,
        "scroll": {"x": 0, "y": 0},
    }
    h = Harness(discover=found)

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("observe", {"what": "page", "include_offscreen": True})
        body = json.loads(texts(r)[0])
        assert [e["in_viewport"] for e in body["elements"]] == [True, False]
        assert body["elements_total"] == 2

    h.run(scenario)
    assert h.sent("discover")[0]["include_offscreen"] is True


# ---- JavaScript dialogs: answered through interact, and errors that name the open one ---------

CONFIRM = {"type": "confirm", "message": "Leave site?", "default_prompt": "", "url": "http://a/"}


def answered(args: dict[str, Any]) -> dict[str, Any]:
    if args["action"] != "dialog":
        return acted(args)
    prompt = args.get("prompt_text") if args["accept"] else None
    return {
        "action": "dialog",
        "accepted": args["accept"],
        "dialog": {**CONFIRM, "type": "prompt"} if "prompt_text" in args else CONFIRM,
        "prompt_text": prompt,
        "url": "http://a/",
        "title": "A",
        "notes": [],
    }


def test_dialog_action_goes_to_the_host_and_says_what_it_answered() -> None:
    h = Harness(interact=answered)

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("interact", {"action": "dialog", "accept": False})
        assert not r.is_error
        assert texts(r)[0].startswith('Dismissed the confirm dialog "Leave site?".')
        r = await c.call_tool(
            "interact", {"action": "dialog", "accept": True, "prompt_text": "Grace"}
        )
        assert 'The prompt returned "Grace".' in texts(r)[0]

    h.run(scenario)
    sent = h.sent("interact")
    assert sent[0] == {"action": "dialog", "accept": False, "timeout_ms": 15_000}
    assert sent[1]["prompt_text"] == "Grace" and sent[1]["accept"] is True


def test_dialog_argument_errors_name_the_field() -> None:
    h = Harness(interact=answered)

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("interact", {"action": "dialog"})
        assert r.is_error and "needs accept" in texts(r)[0]
        r = await c.call_tool("interact", {"action": "dialog", "accept": False, "prompt_text": "x"})
        assert r.is_error and "pass accept=true" in texts(r)[0]
        r = await c.call_tool("interact", {"action": "click", "selector": "#a", "accept": True})
        assert r.is_error and 'belong to action="dialog"' in texts(r)[0]

    h.run(scenario)
    assert h.sent("interact") == []


def test_dialog_and_busy_errors_reach_the_model_verbatim() -> None:
    from shotbridge.wire.errors import DialogOpenError, NoDialogError, command_error

    note = "The page shows a confirm dialog: 'Leave site?' — it blocks the page until answered"
    assert isinstance(command_error("dialog_open", note), DialogOpenError)
    h = Harness(
        interact=command_error("no_dialog", "No JavaScript dialog is open in tab 7."),
        screenshot=command_error("dialog_open", note),
    )

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("interact", {"action": "dialog", "accept": True})
        assert r.is_error and "No JavaScript dialog is open in tab 7." in texts(r)[0]
        r = await c.call_tool("capture_screenshot", {})
        assert r.is_error and note in texts(r)[0]
        assert "may still be loading" not in texts(r)[0]

    h.run(scenario)
    assert isinstance(command_error("no_dialog", "x"), NoDialogError)


def test_navigate_forwards_keep_beforeunload_and_shows_its_notes() -> None:
    note = "The page shows a beforeunload dialog: '' — it blocks the page until answered"

    def held(args: dict[str, Any]) -> dict[str, Any]:
        tab = {"id": 7, "url": "http://a/", "title": "A", "tracked": True}
        return {"tab": tab, "dialog": {**CONFIRM, "type": "beforeunload"}, "notes": [note]}

    h = Harness(navigate=held)

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool(
            "interact", {"action": "navigate", "url": "http://b/", "keep_beforeunload": True}
        )
        assert not r.is_error
        first, second = texts(r)[0].splitlines()
        assert first == 'Navigated to http://a/ "A" (tab 7).' and second == note

    h.run(scenario)
    [sent] = h.sent("navigate")
    assert sent["keep_beforeunload"] is True


def test_host_interact_args_check_dialog_fields() -> None:
    import pytest
    from shotbridge.host.interact import check_action
    from shotbridge.wire.errors import CommandError
    from shotbridge.wire.interact import InteractArgs

    with pytest.raises(CommandError, match="dialog needs accept"):
        check_action(InteractArgs.model_validate({"action": "dialog"}))
    with pytest.raises(CommandError, match='belong to action="dialog"'):
        check_action(InteractArgs.model_validate({"action": "hover", "selector": "a", "accept": 1}))
    check_action(InteractArgs.model_validate({"action": "dialog", "accept": True}))


# ---- select, upload, drag, wait ----------------------------------------------------------------

ELEMENT = {"tag": "select", "role": "combobox", "name": "Fruit", "selector": "#fruit"}


def _did(args: dict[str, Any]) -> dict[str, Any]:
    """The host's answer to each of the four actions, as the extension words it."""
    page = {"url": "http://127.0.0.1:8000/a.html", "title": "A"}
    if args["action"] == "select":
        chosen = [{"value": "kiwi", "label": "Kiwi", "index": 2}]
        return {"action": "select", "element": ELEMENT, "selected": chosen, **page}
    if args["action"] == "upload":
        files = [{"name": "a.txt", "size": 5, "type": "text/plain"}]
        return {"action": "upload", "element": {**ELEMENT, "tag": "input"}, "files": files, **page}
    if args["action"] == "drag":
        end = {"point": {"x": 10, "y": 20}, "hit": HIT}
        return {"action": "drag", "start": end, "end": end, "html5": True, **page}
    met = args.get("text") != "late"
    seen = {"found": 0, "url": page["url"]}
    return {"action": "wait", "met": met, "waited_ms": 1200, "seen": seen, **page}


def test_select_upload_drag_wait_send_their_arguments_and_say_what_happened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = Harness(interact=_did)
    said: list[str] = []
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rel").mkdir()
    (tmp_path / "rel" / "a.txt").write_text("hello")
    png = tmp_path / "b.png"
    png.write_bytes(b"\x89PNG")

    async def scenario(c: mcp.Client) -> None:
        for args in (
            {"action": "select", "selector": "#fruit", "values": ["Kiwi", 2]},
            {"action": "upload", "label": 4, "files": ["rel/a.txt", str(png)]},
            {"action": "drag", "selector": "#card", "to": {"label": 7}},
            {"action": "wait", "text": "Saved", "gone": True, "timeout": 2.5},
            {"action": "wait"},
        ):
            r = await c.call_tool("interact", args)
            assert not r.is_error, texts(r)
            said.append(texts(r)[0])
        r = await c.call_tool("interact", {"action": "wait", "text": "late", "timeout": 1})
        assert r.is_error
        said.append(texts(r)[0])

    h.run(scenario)
    select, upload, drag, wait, quiet = h.sent("interact")[:5]
    assert select["values"] == ["Kiwi", 2]
    # The server read the files where it runs; the host gets their bytes, never a path to read.
    assert "files" not in upload
    assert [(u["name"], u["mime"], u["path"], u["data"]) for u in upload["uploads"]] == [
        ("a.txt", "text/plain", str(tmp_path / "rel" / "a.txt"), b"hello"),
        ("b.png", "image/png", str(png), b"\x89PNG"),
    ]
    assert upload["label"] == 4
    assert drag["to"] == {"label": 7}
    assert wait["gone"] is True and wait["wait_ms"] == 2500 and wait["text"] == "Saved"
    assert quiet["wait_ms"] == 5000 and "text" not in quiet and "url" not in quiet
    assert said[0].startswith('Selected in combobox "Fruit" (#fruit): now "Kiwi" (value "kiwi").')
    assert said[1].startswith('Set 1 file(s) on combobox "Fruit" (#fruit): a.txt (5 bytes).')
    assert said[2].startswith('Dragged from CSS (10, 20) on button "Save" (#save) to CSS (10, 20)')
    assert "an HTML5 drag" in said[2]
    assert said[3].startswith('Waited 1.2 s: the text "Saved" disappeared.')
    assert said[4].startswith("Waited 1.2 s: the network went quiet.")
    assert 'Timed out after 1.2 s before the text "late" appeared; it sees no match on' in said[5]


def test_bad_arguments_of_the_four_actions_are_one_sentence_each() -> None:
    from shotbridge.host.interact import check_action, parse
    from shotbridge.wire.errors import CommandError
    from shotbridge.wire.interact import InteractArgs

    def refused(**args: Any) -> str:
        with pytest.raises(CommandError) as err:
            check_action(InteractArgs.model_validate(args))
        return err.value.message

    assert refused(action="select", values=["a"]).startswith("select needs a selector, a label")
    assert refused(action="select", selector="#s").startswith("select needs values")
    assert refused(action="upload", selector="#f").startswith("upload needs files")
    # A path from a bus client (maybe on another machine, over a forward) is never read here.
    with pytest.raises(CommandError, match="the host reads no path"):
        check_action(parse({"action": "upload", "selector": "#f", "files": ["/etc/hostname"]}))
    assert refused(action="drag", selector="#a").startswith("drag needs to")
    assert refused(action="drag", selector="#a", to=3).startswith("drag needs to")
    assert refused(action="wait", text="a", url="b").startswith("wait takes one of text")
    assert refused(action="wait", text="  ").startswith("wait: text and url must hold")
    assert refused(action="wait", label=2).startswith("wait looks for text")
    assert 'belongs to action="drag"' in refused(action="scroll", to={"selector": "#x"})
    with pytest.raises(CommandError) as err:
        parse({"action": "drag", "selector": "#a", "to": {"x": 1}})
    assert err.value.message == "to: give both x and y, or neither."
    with pytest.raises(CommandError) as err:
        parse({"action": "wait", "text": "a", "wait_ms": 61_000})
    assert err.value.message == "wait_ms: Input should be less than or equal to 60000."


def test_upload_reads_the_files_and_sends_them_in_parts(tmp_path: Path) -> None:
    from shotbridge.client.upload_files import read_files
    from shotbridge.host import actions
    from shotbridge.wire.errors import CommandError
    from shotbridge.wire.interact import InteractArgs

    big = tmp_path / "big.bin"
    big.write_bytes(bytes(range(256)) * 3000)  # 768,000 bytes: two parts
    small = tmp_path / "note.txt"
    small.write_text("hi")
    sent: list[tuple[str, dict[str, Any]]] = []

    class Link:
        async def request(self, cmd: str, args: dict[str, Any], timeout: float = 15) -> Any:
            sent.append((cmd, args))
            return {"action": "upload", "files": []}

    a = InteractArgs(action="upload", selector="#f", uploads=read_files([str(big), str(small)]))
    asyncio.run(actions.upload(Link(), None, a, 10))  # type: ignore[arg-type]
    parts = [args for cmd, args in sent if cmd == "upload_part"]
    [final] = [x for c, x in sent if c == "upload"]
    assert [p["index"] for p in parts] == [0, 1] and final["parts"] == 2
    joined = base64.b64decode("".join(p["data"] for p in parts))
    assert joined == big.read_bytes() + b"hi"
    assert [(f["name"], f["size"], f["mime"]) for f in final["files"]] == [
        ("big.bin", 768_000, "application/octet-stream"),
        ("note.txt", 2, "text/plain"),
    ]
    assert final["selector"] == "#f" and final["upload_id"] == parts[0]["upload_id"]
    (tmp_path / ".ssh").mkdir()
    key = tmp_path / ".ssh" / "id_ed25519"
    key.write_text("secret")
    (tmp_path / "key").symlink_to(key)
    for bad, why in (
        ("rel.txt", "is not an absolute path"),
        (str(tmp_path), "is not a file"),
        (str(key), "lies in a hidden folder, where keys and credentials live"),
        (str(tmp_path / "key"), "lies in a hidden folder"),
    ):
        with pytest.raises(CommandError, match=why):
            read_files([bad])


def test_the_four_actions_replay_as_playwright_calls() -> None:
    from shotbridge.generate import tool_actions
    from shotbridge.wire.timeline import ActionEntry, Target, WaitFor

    def lines(**entry: Any) -> list[str]:
        got = tool_actions.lines(ActionEntry.model_validate(entry), "loc", "page")
        assert got is not None
        return got

    assert lines(kind="select", values=["a", "it's"]) == [
        "await loc.selectOption(['a', 'it\\'s']);"
    ]
    assert lines(kind="upload", files=["/t/a b.txt"]) == [
        "await loc.setInputFiles(['/t/a b.txt']);"
    ]
    done = Target(selector="#done")
    assert lines(kind="drag", to=done) == ["await loc.dragTo(page.locator('#done'));"]
    assert lines(kind="drag", to=done, by_points=True, from_point={"x": 1.5, "y": 2},
                 to_point={"x": 30, "y": 40}) == [
        "await page.mouse.move(1.5, 2);",
        "await page.mouse.down();",
        "await page.mouse.move(30, 40, { steps: 10 });",
        "await page.mouse.up();",
    ]  # fmt: skip
    hostile = "x');\nprocess.exit(1);//"
    [wait] = lines(kind="wait", wait=WaitFor(text=hostile, gone=True, timeout_ms=9000))
    assert wait == (
        "await page.getByText('x\\');\\nprocess.exit(1);//').first()"
        ".waitFor({ state: 'hidden', timeout: 9000 });"
    )
    [url] = lines(kind="wait", wait=WaitFor(url="**/done?*"))
    assert "new RegExp('^.*/done\\\\?[^/]*$').test(url.href)" in url
    assert tool_actions.glob_regex("**/a*.html") == "^.*/a[^/]*\\.html$"
    [quiet] = lines(kind="wait", wait=WaitFor(network=True, timeout_ms=100))
    assert quiet == "await page.waitForLoadState('networkidle', { timeout: 5000 });"
