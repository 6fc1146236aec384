"""Artifacts generated from a recorded session: Playwright reproduction scripts and tests
(``playwright``), their data fixtures (``fixtures``) and Markdown bug reports (``report``).

Everything here is pure: it reads a :class:`~shotbridge.generate.steps.Session` (the host's
``timeline`` export plus screenshot bytes) and returns text, so it is unit-testable without a
browser.
"""
