"""The exceptions shotbridge raises. Every one derives from :class:`ShotbridgeError`.

The Rust core raises the :class:`ImageError` family (it imports these classes with PyO3's
``import_exception!``), so Python owns the hierarchy and callers catch one base class.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """Error codes shared by the extension, the host and clients."""

    BAD_REQUEST = "bad_request"  # malformed or unknown command / arguments
    BAD_FRAME = "bad_frame"  # truncated, oversized or undecodable frame
    NOT_CONNECTED = "not_connected"  # no extension connected to the host
    NO_TAB = "no_tab"  # no tab to act on (none tracked, tab id unknown)
    TAB_CLOSED = "tab_closed"  # the tab went away mid-command
    RESTRICTED_PAGE = "restricted_page"  # chrome://, the Web Store, other extensions
    INVALID_SELECTOR = "invalid_selector"
    NOT_FOUND = "not_found"  # selector matched nothing
    DEBUGGER_UNAVAILABLE = "debugger_unavailable"  # chrome.debugger could not attach
    CAPTURE_FAILED = "capture_failed"
    NAVIGATION_FAILED = "navigation_failed"
    TIMEOUT = "timeout"
    IMAGE_ERROR = "image_error"  # the core refused the image
    # A coordinate/label action names a screenshot of another page (or one no longer kept).
    STALE_SCREENSHOT = "stale_screenshot"
    DIALOG_OPEN = "dialog_open"  # a JavaScript dialog blocks the page (interact action=dialog)
    NO_DIALOG = "no_dialog"  # interact action=dialog, but no dialog is open
    PAGE_BUSY = "page_busy"  # the page's main thread does not answer (endless script)
    INTERNAL = "internal"


RESTRICTED_MESSAGE = "Cannot capture screenshots of browser internal pages."


class ShotbridgeError(Exception):
    """Base class of every error shotbridge raises on purpose."""


# ---- image core -----------------------------------------------------------------------------


class ImageError(ShotbridgeError, ValueError):
    """The image core refused an input; ``reason`` names why in one word."""

    reason = "image_error"


class EmptyInputError(ImageError):
    reason = "empty_input"


class Base64Error(ImageError):
    reason = "bad_base64"


class UnknownFormatError(ImageError):
    reason = "unknown_format"


class CorruptImageError(ImageError):
    reason = "corrupt_image"


class ImageTooLargeError(ImageError):
    """Over 100 megapixels or a side over 32 768 px: refused before decoding (a bomb)."""

    reason = "too_large"


class InvalidInputError(ImageError):
    """An argument the core cannot take (wrong type, text that is not Unicode, bad options)."""

    reason = "bad_input"


class CoreInternalError(ImageError):
    """A bug inside the core (a Rust panic), surfaced instead of a crash."""

    reason = "internal"


# ---- bus and browser ------------------------------------------------------------------------


class FrameError(ShotbridgeError):
    """A bus or native-messaging frame was truncated, oversized or garbage."""


class BusError(ShotbridgeError):
    """The bus could not be reached, or the host went away."""


class NotConnectedError(BusError):
    """No host is running, or no extension is connected to it."""


class CommandError(ShotbridgeError):
    """The extension or host answered a request with an error (``code`` from ErrorCode)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.message} [{self.code}]"


class DialogOpenError(CommandError):
    """A JavaScript dialog (alert, confirm, prompt, beforeunload) blocks the page.

    The message names the dialog and its text; ``interact(action="dialog")`` answers it.
    """


class NoDialogError(CommandError):
    """``interact(action="dialog")`` found no JavaScript dialog open in the tab."""


class PageBusyError(CommandError):
    """The page's main thread does not answer (an endless or long script): navigate away,
    reload or open a new tab (navigation ends the stuck renderer)."""


# Error codes (ErrorCode values) with a class of their own.
_TYPED: dict[str, type[CommandError]] = {
    "dialog_open": DialogOpenError,
    "no_dialog": NoDialogError,
    "page_busy": PageBusyError,
}


def command_error(code: str, message: str) -> CommandError:
    """The CommandError for an error reply: its own subclass where the code has one."""
    return _TYPED.get(code, CommandError)(code, message)


class BrowserError(ShotbridgeError):
    """A headless browser could not be found, started, or reached."""
