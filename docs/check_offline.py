"""Fail if a built page would load anything from the network.

Usage: ``python docs/check_offline.py docs/_build/html`` (``make docs`` runs it).

Checks every ``.html`` and ``.css`` file under the build directory for a script,
stylesheet, image, frame, ``@import`` or ``url(...)`` whose address is not
local (``http:``, ``https:`` or protocol-relative ``//``). Ordinary links
(``<a href>``) may point anywhere: following one is the reader's choice.
Prints every offending file and address and exits 1, or prints a one-line
summary and exits 0. Also fails if the directory holds no HTML at all.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

REMOTE = re.compile(r"^\s*(https?:)?//", re.I)
_CSS_URL = re.compile(r"""@import\s+['"]([^'"]+)['"]|url\(\s*['"]?([^'")\s]+)""", re.I)
# (tag, attribute) pairs that make a browser fetch something when the page loads
LOADS = {("script", "src"), ("link", "href"), ("img", "src"), ("img", "srcset"),
         ("iframe", "src"), ("source", "src"), ("source", "srcset"), ("video", "src"),
         ("audio", "src"), ("embed", "src"), ("object", "data"), ("image", "href")}


def css_urls(text: str) -> list[str]:
    """Addresses in ``@import "..."`` and ``url(...)`` of a piece of CSS."""
    return [a or b for a, b in _CSS_URL.findall(text)]


class _Loads(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "link" and "stylesheet" not in (attrs.get("rel") or "") \
                and "preload" not in (attrs.get("rel") or ""):
            return  # rel=canonical / next / prev / icon links are not loaded as page assets
        for (t, a) in LOADS:
            if t == tag and attrs.get(a) and any(REMOTE.match(u.split()[0])
                                                 for u in attrs[a].split(",") if u.strip()):
                self.found.append(f"<{tag} {a}={attrs[a]!r}>")
        if attrs.get("style"):
            self.found += [f"style url {u}" for u in css_urls(attrs["style"])
                           if REMOTE.match(u)]
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        if tag == "style":
            self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.found += [f"<style> url {u}" for u in css_urls(data) if REMOTE.match(u)]


def remote_loads(root: Path) -> dict[Path, list[str]]:
    """``{file: [remote addresses it would load]}`` for every HTML and CSS file under ``root``."""
    bad: dict[Path, list[str]] = {}
    for path in sorted(root.rglob("*")):
        if path.suffix == ".html":
            p = _Loads()
            p.feed(path.read_text(encoding="utf-8", errors="replace"))
            found = p.found
        elif path.suffix == ".css":
            found = [u for u in css_urls(path.read_text(encoding="utf-8", errors="replace"))
                     if REMOTE.match(u)]
        else:
            continue
        if found:
            bad[path] = found
    return bad


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    root = Path(argv[0])
    pages = list(root.rglob("*.html"))
    if not pages:
        print(f"check_offline: no HTML pages under {root}", file=sys.stderr)
        return 1
    bad = remote_loads(root)
    for path, found in bad.items():
        for f in found:
            print(f"check_offline: {path.relative_to(root)} loads {f}", file=sys.stderr)
    if bad:
        return 1
    print(f"check_offline: {len(pages)} pages under {root} load nothing from the network")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
