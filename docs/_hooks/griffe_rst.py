"""Griffe extension: the reStructuredText bits of elcvx's numpy-style docstrings, as Markdown.

The docstrings are written for ``help()`` and Sphinx-style readers: ``:func:`x``` roles,
``.. math::`` directives, simple tables, ``::`` literal blocks and section titles underlined
with dashes. mkdocstrings renders docstrings as Markdown, so before rendering this extension
rewrites (on a copy held by griffe; the source is untouched):

* ``:func:`~a.b``` (and ``:class:``, ``:meth:``, ``:mod:``, ``:data:``, ``:attr:``, ``:exc:``,
  ``:obj:``) to the code span ```b``` (the full path without ``~``);
* ``:math:`x``` to ``$x$`` and a ``.. math::`` directive to a ``$$ ... $$`` block (arithmatex);
* an RST simple table (rows of ``====`` runs) to a Markdown table;
* a paragraph ending in ``::`` followed by an indented block to a fenced text block;
* a title underlined with ``---`` or ``===`` that is not a numpy section (Parameters, Returns,
  ...) to a bold line, so that it does not become a heading of the API page.
"""

from __future__ import annotations

import re

import griffe

ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|exc|obj):`~?([^`]+)`")
ROLE_SHORT = re.compile(r":(?:func|class|meth|mod|data|attr|exc|obj):`~([^`]+)`")
MATH_ROLE = re.compile(r":math:`([^`]+)`")
TABLE_RULE = re.compile(r"^\s*=+(\s+=+)+\s*$")
UNDERLINE = re.compile(r"^\s*(-{3,}|={3,})\s*$")
NUMPY_SECTIONS = {
    "parameters", "other parameters", "returns", "yields", "receives", "raises", "warns",
    "warnings", "see also", "notes", "references", "examples", "attributes", "methods",
    "functions", "classes", "modules",
}


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _roles(text: str) -> str:
    text = ROLE_SHORT.sub(lambda m: f"`{m[1].rsplit('.', 1)[-1]}`", text)
    text = ROLE.sub(lambda m: f"`{m[1]}`", text)
    return MATH_ROLE.sub(lambda m: f"${m[1].strip()}$", text)


def _table(lines: list[str]) -> list[str]:
    """An RST simple table (three ``===`` rules: header between the first two) as Markdown."""
    spans = [m.span() for m in re.finditer(r"=+", lines[0])]
    starts = [a for a, _ in spans] + [None]

    def cells(row: str) -> str:
        parts = [row[starts[k]:starts[k + 1]].strip() for k in range(len(spans))]
        return "| " + " | ".join(_roles(p) for p in parts) + " |"

    rule_rows = [k for k, row in enumerate(lines) if TABLE_RULE.match(row)]
    header = [cells(row) for row in lines[rule_rows[0] + 1:rule_rows[1]]]
    body = [cells(row) for row in lines[rule_rows[1] + 1:rule_rows[2]] if row.strip()]
    return [*header, "|" + "---|" * len(spans), *body]


def convert(text: str) -> str:
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        pad = " " * _indent(line)
        if stripped.startswith(".. math::"):
            body = [stripped[len(".. math::"):].strip()]
            base = _indent(line)
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > base):
                body.append(lines[j].strip())
                j += 1
            out += ["", pad + "$$", *(pad + b for b in body if b), pad + "$$", ""]
            i = j
            continue
        if TABLE_RULE.match(line):
            j, rules = i, 0
            while j < len(lines) and rules < 3:
                rules += bool(TABLE_RULE.match(lines[j]))
                j += 1
            out += ["", *_table(lines[i:j]), ""]
            i = j
            continue
        if stripped.endswith("::") and i + 1 < len(lines) and not lines[i + 1].strip():
            base = _indent(line)
            j = i + 1
            body = []
            while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > base):
                body.append(lines[j])
                j += 1
            while body and not body[-1].strip():
                body.pop()
            head = stripped[:-2].rstrip()
            if head:
                out.append(pad + _roles(head) + ":")
            width = min(_indent(b) for b in body if b.strip()) if body else 0
            out += ["", pad + "```text", *(pad + b[width:] for b in body), pad + "```", ""]
            i = j
            continue
        if (stripped and i + 1 < len(lines) and UNDERLINE.match(lines[i + 1])
                and stripped.lower() not in NUMPY_SECTIONS):
            out += [pad + f"**{_roles(stripped)}**", ""]
            i += 2
            continue
        out.append(_roles(line))
        i += 1
    return "\n".join(out)


class RstToMarkdown(griffe.Extension):
    """Rewrite every docstring of the loaded package once (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._done: set[int] = set()

    def on_object(self, *, obj, **kwargs) -> None:
        docstring = obj.docstring
        if docstring is not None and id(docstring) not in self._done:
            self._done.add(id(docstring))
            docstring.value = convert(docstring.value)
