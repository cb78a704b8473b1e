"""MkDocs hook: the site's home page is the README, with its links made relative to docs/.

``docs/index.md`` holds the line ``<!-- include: README.md -->``; this hook replaces it by the
README (one source for the quickstart, which GitHub shows too). The README links to the other
pages as ``docs/NAME.md``; on the site they are ``NAME.md``. Any other relative link in the
README (to a file outside docs/) is left alone, so ``mkdocs build --strict`` reports it.
"""

from __future__ import annotations

import re
from pathlib import Path

MARKER = "<!-- include: README.md -->"
DOCS_LINK = re.compile(r"\]\(docs/")


def on_page_markdown(markdown, page, config, files):
    if MARKER not in markdown:
        return markdown
    readme = Path(config["config_file_path"]).parent / "README.md"
    text = DOCS_LINK.sub("](", readme.read_text(encoding="utf-8"))
    return markdown.replace(MARKER, text)
