"""MkDocs hook: a Jupyter notebook of examples/ as a page of the site, without a Jupyter stack.

A page holding ``<!-- include-notebook: examples/NAME.ipynb -->`` gets the notebook in its
place, converted here from the notebook's JSON: Markdown cells as they are, code cells as
``python`` blocks, what a cell printed as ``text`` blocks, its HTML (a result's table) as it is,
and its figures as inline PNG images (the site stays self-contained: no file to copy, no other
host). The saved notebook's outputs are shown, not recomputed: ``tests/docs/test_examples.py``
checks that running its cells prints them. mkdocs-jupyter would do the same through nbconvert
and its dependencies; this needs nothing beyond the standard library.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

MARKER = re.compile(r"<!-- include-notebook: (?P<path>\S+\.ipynb) -->")


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else value


def _fenced(lang: str, text: str) -> str:
    fence = "````" if "```" in text else "```"
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}\n"


def _output(out) -> str:
    if out["output_type"] == "stream":
        return _fenced("text", _text(out["text"]))
    data = out.get("data", {})
    if "image/png" in data:
        png = _text(data["image/png"]).replace("\n", "")
        return f'<img alt="a figure of the notebook" src="data:image/png;base64,{png}">\n'
    if "text/html" in data:
        return f'<div class="notebook-output">\n{_text(data["text/html"])}\n</div>\n'
    if "text/plain" in data:
        return _fenced("text", _text(data["text/plain"]))
    if out["output_type"] == "error":
        return _fenced("text", html.escape(f"{out['ename']}: {out['evalue']}"))
    return ""


def to_markdown(path: Path) -> str:
    """The notebook at ``path`` as Markdown (see the module docstring)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    parts = []
    for cell in nb["cells"]:
        source = _text(cell["source"])
        if cell["cell_type"] == "markdown":
            parts.append(source.strip() + "\n")
        elif cell["cell_type"] == "code":
            parts.append(_fenced("python", source))
            parts.extend(_output(out) for out in cell.get("outputs", []))
    return "\n".join(p for p in parts if p)


def on_page_markdown(markdown, page, config, files):
    root = Path(config["config_file_path"]).parent
    return MARKER.sub(lambda m: to_markdown(root / m["path"]), markdown)
