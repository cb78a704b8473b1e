"""The documentation site works offline and its API reference is one page per module.

Builds the site once (``mkdocs build --strict`` into a temporary directory, about 4 s; needs the
``docs`` extra) and checks the built HTML:

* no ``<script src>`` or ``<link href>`` points at another host (a CDN, web fonts): the
  mathematics is typeset by the KaTeX copy in ``docs/assets/katex/`` and the theme uses the
  system's fonts, so a page read offline shows typeset formulas, not ``\\(w_n\\)``;
* every page with mathematics loads the local KaTeX, and every file the pages and KaTeX's style
  sheet refer to is in the site;
* every formula on the site parses with that KaTeX (run with Node.js, skipped without it);
* the API reference has one page per public module, each in the nav.

The vendored assets stay small (woff2 fonts only, under 2 MB), checked on ``docs/`` directly.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from extras import need

ROOT = Path(__file__).resolve().parents[2]
KATEX = ROOT / "docs" / "assets" / "katex"
# The API pages and the modules each documents (mkdocstrings gives each object the id of its
# full path). The first page, docs/api.md, is the reference's landing page.
API_PAGES = {
    "api.md": ["elcvx", "elcvx.Sample", "elcvx.estimate.estimate", "elcvx.interval.interval",
               "elcvx.interval.profile", "elcvx.difference.difference",
               "elcvx.evaluation.evaluate", "elcvx.errors"],
    "api/selection.md": ["elcvx.selection.select", "elcvx.selection.SelectionResult"],
    "api/results.md": ["elcvx.results", "elcvx.results.EvaluationResult",
                       "elcvx.results.EstimateResult.confidence_interval", "elcvx.status"],
    "api/programs.md": ["elcvx.programs", "elcvx.programs.empirical_likelihood",
                        "elcvx.programs.cr_primal", "elcvx.programs.learning"],
    "api/baselines.md": ["elcvx.baselines"],
    "api/estimators.md": ["elcvx.estimators", "elcvx.estimators.finite_sample",
                          "elcvx.estimators.el_betting"],
    "api/cressie_read.md": ["elcvx.cressie_read"],
    "api/constraints.md": ["elcvx.constraints"],
    "api/sequences.md": ["elcvx.sequences"],
    "api/learning.md": ["elcvx.learning"],
    "api/io.md": ["elcvx.io", "elcvx.cli"],
    "api/datasets.md": ["elcvx.datasets"],
    "api/adapters.md": ["elcvx.adapters"],
    "api/testing.md": ["elcvx.testing"],
    "api/certify.md": ["elcvx.certify", "elcvx.verdict"],
    "api/internals.md": ["elcvx.model", "elcvx.chunked", "elcvx.cache", "elcvx.engines", "elcvx.passes", "elcvx.fast", "elcvx.cvx",
                         "elcvx.dispatch", "elcvx.solutions", "elcvx.feasibility",
                         "elcvx.calibration", "elcvx.checks", "elcvx.extra_atom", "elcvx.thin"],
}
# Words of rendered text per API page; the single page this replaced had about 15,000.
MAX_API_WORDS = 6000
REMOTE = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:)?//", re.I)  # http://, https://, //host
ARITHMATEX = re.compile(r'<(span|div) class="arithmatex">(.*?)</\1>', re.S)


def _built_url(page: str) -> str:
    """``api/io.md`` -> ``api/io/index.html`` (mkdocs' directory URLs)."""
    stem = page[:-3]
    return "index.html" if stem == "index" else f"{stem}/index.html"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    for module in ("mkdocs", "material", "mkdocstrings_handlers.python"):
        need(module)
    out_dir = tmp_path_factory.mktemp("site")
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out_dir)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out_dir


class _Refs(HTMLParser):
    """The URLs a page loads: ``<script src>`` and ``<link href>`` (style sheets, icons, ...)."""

    def __init__(self):
        super().__init__()
        self.scripts, self.links = [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script" and attrs.get("src"):
            self.scripts.append(attrs["src"])
        elif tag == "link" and attrs.get("href"):
            self.links.append((attrs.get("rel") or "", attrs["href"]))


def _refs(page: Path) -> _Refs:
    parser = _Refs()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def _pages(site: Path):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 10
    return pages


def test_no_page_loads_anything_from_another_host(site):
    remote = []
    for page in _pages(site):
        refs = _refs(page)
        remote += [f"{page.relative_to(site)}: <script src={src}>" for src in refs.scripts
                   if REMOTE.match(src)]
        # <link rel="next|prev|canonical"> are navigation, not resources the page loads.
        remote += [f"{page.relative_to(site)}: <link rel={rel} href={href}>"
                   for rel, href in refs.links
                   if REMOTE.match(href) and rel not in ("next", "prev", "canonical")]
    assert not remote, "pages load from other hosts:\n" + "\n".join(remote[:20])
    for css in site.rglob("*.css"):  # style sheets importing fonts or CSS from elsewhere
        text = css.read_text(encoding="utf-8", errors="replace")
        urls = re.findall(r"url\(\s*['\"]?([^'\")]+)", text) + re.findall(r"@import\s+['\"]([^'\"]+)", text)
        assert not [u for u in urls if REMOTE.match(u)], f"{css.relative_to(site)} loads from another host"


def test_math_is_typeset_by_the_local_katex(site):
    with_math = [p for p in _pages(site) if 'class="arithmatex"' in p.read_text(encoding="utf-8")]
    assert len(with_math) >= 3  # primal-dual, prototyping and the API pages at least
    for page in with_math:
        refs = _refs(page)
        scripts = [Path(s).name for s in refs.scripts]
        assert "katex.min.js" in scripts and "katex-init.js" in scripts, page
        assert scripts.index("katex.min.js") < scripts.index("katex-init.js"), page
        assert any(href.endswith("katex/katex.min.css") for _, href in refs.links), page
        for ref in [*refs.scripts, *(href for _, href in refs.links)]:
            if not REMOTE.match(ref) and not ref.startswith("#"):
                target = (page.parent / ref.split("#")[0].split("?")[0]).resolve()
                assert target.exists(), f"{page.relative_to(site)} refers to missing {ref}"
    # Every font the style sheet names is in the site, next to it.
    css = site / "assets" / "katex" / "katex.min.css"
    fonts = re.findall(r"url\(([^)]+)\)", css.read_text(encoding="utf-8"))
    assert len(fonts) == 20
    for font in fonts:
        assert (css.parent / font).is_file(), font


def test_vendored_katex_is_small_and_woff2_only():
    files = [p for p in KATEX.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    assert size < 2_000_000, f"docs/assets/katex is {size} bytes"
    fonts = [p for p in files if p.parent.name == "fonts"]
    assert fonts and all(p.suffix == ".woff2" for p in fonts)
    css = (KATEX / "katex.min.css").read_text(encoding="utf-8")
    assert "woff2" in css and ".woff)" not in css and ".ttf" not in css
    assert (KATEX / "LICENSE").is_file()
    # The fonts KaTeX's CSS names and the files shipped are the same set.
    named = set(re.findall(r"url\(fonts/([^)]+)\)", css))
    assert named == {p.name for p in fonts}


def test_every_formula_parses_with_the_vendored_katex(site, tmp_path):
    # KaTeX supports less than MathJax; a formula it cannot parse would show as red source.
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed")
    formulas = []
    for page in _pages(site):
        for m in ARITHMATEX.finditer(page.read_text(encoding="utf-8")):
            tex = html.unescape(m[2]).strip()
            inner = re.fullmatch(r"\\\((.*)\\\)|\\\[(.*)\\\]", tex, re.S)
            formulas.append({"page": str(page.relative_to(site)), "display": m[1] == "div",
                             "tex": next(g for g in inner.groups() if g is not None) if inner else tex})
    assert len(formulas) > 100
    (tmp_path / "formulas.json").write_text(json.dumps(formulas), encoding="utf-8")
    script = """
        const katex = require(process.argv[1]);
        const items = JSON.parse(require("fs").readFileSync(process.argv[2], "utf8"));
        const bad = [];
        for (const it of items) {
          try { katex.renderToString(it.tex, {displayMode: it.display, throwOnError: true}); }
          catch (e) { bad.push(it.page + ": " + e.message.slice(0, 300)); }
        }
        console.log(JSON.stringify(bad));
    """
    out = subprocess.run([node, "-e", script, str(KATEX / "katex.min.js"),
                          str(tmp_path / "formulas.json")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    bad = json.loads(out.stdout)
    assert not bad, "formulas KaTeX cannot parse:\n" + "\n".join(bad[:20])


def test_api_reference_is_one_page_per_module(site):
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page, objects in API_PAGES.items():
        assert re.search(rf":\s*{re.escape(page)}\s*$", nav, re.M), f"{page} is not in the nav"
        built = (site / _built_url(page)).read_text(encoding="utf-8")
        for obj in objects:
            assert f'id="{obj}"' in built, f"{obj} is not documented on {page}"
        article = built[built.find("<article"):built.find("</article>")]
        words = len(html.unescape(re.sub(r"<[^>]+>", " ", article)).split())
        assert words < MAX_API_WORDS, f"{page}: {words} words"
    # Each module is documented on exactly one page (none twice, none lost in the split).
    for page in API_PAGES:
        for other, objects in API_PAGES.items():
            if other != page:
                built = (site / _built_url(page)).read_text(encoding="utf-8")
                for obj in objects:
                    if obj != "elcvx":
                        assert f'id="{obj}"' not in built, f"{obj} is on {page} and {other}"


def test_every_public_module_has_an_api_page():
    # A new module (elcvx/NAME.py or a subpackage) must be added to a page of the reference.
    documented = {obj.rsplit(".", 1)[0] if obj.count(".") > 1 else obj
                  for objects in API_PAGES.values() for obj in objects}
    documented |= {"elcvx.sample"}  # elcvx.Sample, on the first page
    not_in_reference = {"elcvx.experiments"}  # the studies' code: docs/synthetic.md, realistic.md
    modules = {f"elcvx.{p.stem}" for p in (ROOT / "elcvx").glob("*.py")}
    modules |= {f"elcvx.{p.parent.name}" for p in (ROOT / "elcvx").glob("*/__init__.py")}
    public = {m for m in modules if not m.rsplit(".", 1)[1].startswith("_")}
    assert public - documented - not_in_reference == set()


GENERATED = re.compile(r"<!-- generated by benchmarks/([\w.-]+): (begin|end) -->")


def test_generated_sections_name_existing_benchmarks():
    # A docs table written by a benchmark sits between markers naming the script (see
    # benchmarks/_docs.py); each pair is whole, names a script that exists and holds a table.
    seen = set()
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        found = list(GENERATED.finditer(text))
        assert [m[2] for m in found] == ["begin", "end"] * (len(found) // 2), page
        for begin, end in zip(found[::2], found[1::2]):
            assert begin[1] == end[1], f"{page}: {begin[0]} closed by {end[0]}"
            assert (ROOT / "benchmarks" / begin[1]).is_file(), f"{page}: no {begin[1]}"
            assert "|---" in text[begin.end():end.start()], f"{page}: {begin[1]} wrote no table"
            seen.add((page.name, begin[1]))
    assert {("performance.md", f"bench_{name}.py") for name in ("core", "cvxpy", "formulations")
            } | {("learning.md", "bench_learning.py")} <= seen


def test_the_notebook_is_a_page(site):
    # examples/evaluate_a_log.ipynb rendered by docs/_hooks/notebook.py: its code, what it
    # printed, the evaluation's table and its two figures, inline (no other file, no host).
    nb = json.loads((ROOT / "examples" / "evaluate_a_log.ipynb").read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    printed = ["".join(o["text"]) for c in code for o in c["outputs"] if o["output_type"] == "stream"]
    page = html.unescape((site / "notebook" / "index.html").read_text(encoding="utf-8"))
    text = re.sub(r"<[^>]+>", "", page)
    for block in printed:
        for line in block.splitlines():
            assert line.strip() in text, line
    assert "elcvx.evaluate(sample)" in text
    assert page.count('src="data:image/png;base64,') == 2
    assert "<strong>EvaluationResult</strong>" in page  # the result's table, as Jupyter shows it


def test_the_architecture_page_lists_every_module_and_folder():
    # docs/architecture.md's table is the package's map: a module or folder added to elcvx/ (or
    # one moved or removed) must show in it, so the page cannot drift from the tree.
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = page[page.index("| path | layer | holds |"):page.index("Modules whose name")]
    listed = set(re.findall(r"`(elcvx/[\w/.]+)`", table))
    tree = {f"elcvx/{p.name}" for p in (ROOT / "elcvx").glob("*.py")
            if not p.name.startswith("_")}
    tree |= {f"elcvx/{p.name}/" for p in (ROOT / "elcvx").iterdir()
             if p.is_dir() and not p.name.startswith("_")}
    assert listed == tree, (f"missing from the table: {sorted(tree - listed)}; "
                            f"not in the package: {sorted(listed - tree)}")
