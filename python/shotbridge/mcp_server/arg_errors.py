"""Tool arguments: declared once as a model, and their errors as one plain sentence.

A tool's parameters are the fields of one pydantic model (:func:`parameters`): the SDK builds the
published JSON schema from them as from any signature, and the tool reads the validated model.

The MCP SDK turns a pydantic ValidationError on tool arguments into
``ToolError("Error executing tool X: 1 validation error for ...Arguments ... https://errors.pydantic.dev/...")``.
:func:`install` wraps the SDK's ``Tool.run`` once so the model reads instead, e.g.
"observe: argument 'what' must be one of 'page', 'errors', 'tabs', 'screenshots' (got 'pages')."
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, get_type_hints

from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import base
from pydantic import BaseModel, ValidationError

F = TypeVar("F", bound=Callable[..., Any])


def parameters(model: type[BaseModel]) -> Callable[[F], F]:
    """Give a ``**kwargs`` tool function the signature of ``model``'s fields.

    The SDK reads a tool's schema from ``inspect.signature``; the annotations (``Annotated[T,
    Field(description=...)]``) and defaults are the model's own, so the schema is what the same
    parameters written out would give.
    """
    hints = get_type_hints(model, include_extras=True)
    params = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=hints[name],
            default=inspect.Parameter.empty if field.is_required() else field.default,
        )
        for name, field in model.model_fields.items()
    ]

    def apply(fn: F) -> F:
        fn.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        return fn

    return apply


def _field(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc if p not in ("arguments",)) or "arguments"


def _one(err: Any) -> str:
    field = _field(tuple(err.get("loc", ())))
    kind = err.get("type", "")
    ctx = err.get("ctx") or {}
    got = err.get("input")
    shown = f" (got {got!r})" if kind != "missing" and not isinstance(got, dict) else ""
    if kind == "missing":
        return f"argument '{field}' is required"
    if kind in ("literal_error", "enum"):
        expected = str(ctx.get("expected", "")).replace(" or ", ", ")
        return f"argument '{field}' must be one of {expected}{shown}"
    if kind == "extra_forbidden":
        return f"argument '{field}' is not accepted by this tool"
    msg = str(err.get("msg", "is not valid"))
    msg = msg[0].lower() + msg[1:] if msg else "is not valid"
    if msg.startswith("input should be "):
        msg = "must be " + msg.removeprefix("input should be ")
    return f"argument '{field}' {msg}{shown}"


def plain(tool: str, exc: ValidationError) -> str:
    """One sentence naming every bad field and what it accepts (no pydantic URL)."""
    parts = [_one(e) for e in exc.errors(include_url=False)[:5]]
    return f"{tool}: " + "; ".join(parts) + "."


def install() -> None:
    """Wrap the SDK's Tool.run (once) so argument validation errors read as :func:`plain`."""
    run = base.Tool.run
    if getattr(run, "_shotbridge_plain_errors", False):
        return

    @functools.wraps(run)
    async def wrapped(self: base.Tool, *args: Any, **kwargs: Any) -> Any:
        try:
            return await run(self, *args, **kwargs)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(plain(self.name, cause)) from None
            raise

    wrapped._shotbridge_plain_errors = True  # type: ignore[attr-defined]
    base.Tool.run = wrapped  # type: ignore[method-assign]
