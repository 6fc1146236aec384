"""One version: rust/Cargo.toml is the source; the package metadata and the extension follow it."""

from __future__ import annotations

import json
import tomllib
from importlib import metadata
from pathlib import Path

import shotbridge
from shotbridge.install.register import extension_dir

REPO = Path(__file__).resolve().parents[1]


def cargo_version() -> str:
    return tomllib.loads((REPO / "rust" / "Cargo.toml").read_text())["package"]["version"]


def test_pyproject_takes_its_version_from_cargo() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]


def test_extension_manifest_version_is_the_package_version() -> None:
    manifest = json.loads((REPO / "python/shotbridge/extension/manifest.json").read_text())
    assert manifest["version"] == cargo_version()
    # The copy the host hands to Chromium is the same one.
    assert json.loads((extension_dir() / "manifest.json").read_text())["version"] == cargo_version()


def test_installed_version_is_exposed_to_the_host() -> None:
    assert metadata.version("shotbridge") == shotbridge.__version__ == cargo_version()
