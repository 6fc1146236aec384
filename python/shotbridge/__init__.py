"""shotbridge: let AI coding assistants see the developer's browser."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("shotbridge")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0"

__all__ = ["__version__"]
