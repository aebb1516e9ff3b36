"""What an HTML text makes, for the tests that check nothing a label holds becomes markup:
every start tag with its attributes, and the text between them."""

from __future__ import annotations

from html.parser import HTMLParser


class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def tags(html: str) -> Tags:
    """``html`` parsed: its ``tags`` (``(tag, {attribute: value})``) and ``text`` pieces."""
    p = Tags()
    p.feed(html)
    p.close()
    return p
