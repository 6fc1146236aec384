"""Resilient Playwright locators for a recorded target.

Order of preference, as Playwright recommends: ``getByTestId`` (a contract with the app), then
``getByRole(role, {name})`` (what users and assistive tech see), then ``getByLabel`` (form
fields), then the CSS selector recorded at the time. A candidate is used only if it matched exactly
one element when the action happened (the recorder checks), since Playwright refuses ambiguous
locators; a name we derived only from a placeholder or cut short is not trusted either. Every
recorded string enters the expression as a literal through ``encode.js_string``.
"""

from __future__ import annotations

from shotbridge.generate.encode import js_string as js
from shotbridge.wire.timeline import Target

# ARIA roles Playwright's getByRole accepts (the ones our recorder can report).
ROLES = frozenset(
    """alert alertdialog application article banner blockquote button caption cell checkbox code
    columnheader combobox complementary contentinfo definition deletion dialog directory document
    emphasis feed figure form generic grid gridcell group heading img insertion link list listbox
    listitem log main marquee math menu menubar menuitem menuitemcheckbox menuitemradio meter
    navigation none note option paragraph presentation progressbar radio radiogroup region row
    rowgroup rowheader scrollbar search searchbox separator slider spinbutton status strong
    subscript superscript switch tab table tablist tabpanel term textbox time timer toolbar
    tooltip tree treegrid treeitem""".split()  # noqa: SIM905 (readable as prose)
)


def css(selector: str) -> str:
    """Our ``host >>> inner`` shadow syntax → Playwright CSS, which pierces open shadow roots."""
    return " ".join(part.strip() for part in selector.split(">>>"))


def strategy(t: Target) -> str:
    """Which locator :func:`locator` picks: testid, role, label or css."""
    if t.testid and t.unique.testid:
        return "testid"
    if (
        t.role in ROLES
        and t.name
        and t.unique.role
        and not t.name_from_placeholder
        and not t.name.endswith("…")
    ):
        return "role"
    if t.label and t.unique.label and not t.label.endswith("…"):
        return "label"
    return "css"


def locator(t: Target, page: str = "page") -> str:
    """The locator expression, e.g. ``page.getByRole('button', { name: 'Save', exact: true })``."""
    how = strategy(t)
    if how == "testid":
        return f"{page}.getByTestId({js(t.testid)})"
    if how == "role":
        return f"{page}.getByRole({js(t.role)}, {{ name: {js(t.name)}, exact: true }})"
    if how == "label":
        return f"{page}.getByLabel({js(t.label)}, {{ exact: true }})"
    return f"{page}.locator({js(css(t.selector) or t.tag or 'body')})"
