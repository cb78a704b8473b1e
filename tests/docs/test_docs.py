"""Every fenced Python block in README.md and docs/**/*.md runs, and its shown output is checked.

Only the text a reader sees runs: a block is run exactly as shown, with nothing supplied from
hidden HTML comments, so a reader who copies it gets what the test got.

The convention (also stated in docs/index.md, "About this documentation"):

* A page's ```` ```python ```` blocks run in order in one namespace (like a notebook), with the
  repository root as the working directory. README.md's blocks are each run on their own, in a
  fresh namespace: a reader copies one of them, not the page.
* A ```` ```python ```` block followed (blank lines allowed) by a ```` ```text ```` block: the
  text block is the block's expected standard output. A block whose first line starts with
  ``>>>`` is a doctest instead (prompts and expected output interleaved). Both are compared by
  :class:`doctest.OutputChecker` with ``ELLIPSIS`` and ``NORMALIZE_WHITESPACE``.
* Markers: an HTML comment right before a fence (invisible on GitHub and in the site),

  - ``<!-- docs-test: skip: REASON -->``: do not run the next block; a reason is required;
  - ``<!-- docs-test: output-of: elcvx ARGS -->`` before a ```` ```text ```` block: that block is
    the standard output of the ``elcvx`` command (run in-process from the repository root).

  There is no hidden set-up: a ``<!-- docs-test: setup ... -->`` marker is an error (the code a
  block needs goes in the block, or in a visible block before it).

* README.md's shell blocks (``console``, ``sh``, ``bash``) run as written, each in a fresh
  ``bash`` from the repository root after ``make test`` (which made ``.venv``), with nothing of
  the test's environment on the path (:func:`test_readme_shell_blocks_run_as_written`); a
  ``text`` block right after one is its expected output. A block of commands that take hours
  (the studies) is marked ``<!-- docs-test: shell-check: REASON -->``: each of its lines is
  checked instead, ``make TARGET`` by ``make -n`` and ``.venv/bin/elcvx ARGS`` by the
  command's own parser.

Other blocks (``text``, plain) are prose and are not run.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from extras import EXTRAS, need, skip_reason

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
SELF_CONTAINED = {ROOT / "README.md"}  # pages whose blocks each run in a fresh namespace
PYTHON = {"python", "py", "pycon"}
SHELL = {"console", "sh", "bash", "shell"}
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
# The whole documentation must run in well under a minute (measured ~20 s; see the test below).

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
MARKER = re.compile(r"<!--\s*docs-test:\s*(?P<body>.*?)-->", re.S)
LINE_MARKER = re.compile(r"^[ \t]*<!--\s*docs-test:.*?-->", re.S | re.M)  # at a line's start


@dataclass
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    markers: list = field(default_factory=list)  # (kind, argument) pairs, in order
    expected: Block | None = None  # the text block that shows this block's output

    @property
    def where(self) -> str:
        path = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{path}:{self.line}"


def _marker(body: str, where: str):
    kind, _, arg = body.partition(":")
    kind = kind.strip()
    if kind.split()[:1] == ["setup"]:
        raise ValueError(f"{where}: hidden set-up (docs-test: setup) is not allowed: a reader who "
                         "copies the next block would not have it; write it in a visible block")
    if kind == "skip":
        if not arg.strip():
            raise ValueError(f"{where}: a docs-test skip marker needs a reason")
        return "skip", arg.strip()
    if kind == "output-of":
        return "output-of", arg.strip()
    if kind == "shell-check":
        if not arg.strip():
            raise ValueError(f"{where}: a docs-test shell-check marker needs a reason")
        return "shell-check", arg.strip()
    raise ValueError(f"{where}: unknown docs-test marker {body!r}")


def parse(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, with their markers and expected-output links."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    pending: list = []  # markers seen since the last fence or prose line
    last_closed: Block | None = None  # the block closed just before (only blank lines since)
    i = 0
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line)
        if m:
            indent, fence = m["indent"], m["fence"]
            lang = m["info"].strip().split(" ")[0].lower() if m["info"].strip() else ""
            body = []
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(fence):
                body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j])
                j += 1
            if j == len(lines):
                raise ValueError(f"{path}:{i + 1}: unclosed code fence")
            block = Block(path, i + 1, lang, "".join(line + "\n" for line in body), pending)
            if (lang == "text" and last_closed is not None and last_closed.lang in PYTHON | SHELL
                    and not any(k == "output-of" for k, _ in pending)):
                last_closed.expected = block
            blocks.append(block)
            pending, last_closed = [], block
            i = j + 1
            continue
        if line.lstrip().startswith("<!--") and "docs-test" in line:
            j = i
            text = line
            while "-->" not in text:
                j += 1
                text += "\n" + lines[j]
            m = MARKER.search(text)
            if m:
                pending.append(_marker(m["body"], f"{path}:{i + 1}"))
            i = j + 1
            continue
        if line.strip():
            pending, last_closed = [], None
        i += 1
    return blocks


def _check(block: Block, want: str, got: str):
    checker = doctest.OutputChecker()
    if not checker.check_output(want, got, FLAGS):
        example = doctest.Example("", want)
        diff = checker.output_difference(example, got, FLAGS)
        raise AssertionError(f"{block.where}: output differs from the text block below it\n{diff}")


def _run_python(block: Block, namespace: dict):
    if block.code.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(block.code, namespace, block.where,
                                                   str(block.path), block.line)
        out = io.StringIO()
        runner = doctest.DocTestRunner(optionflags=FLAGS)
        runner.run(test, out=out.write, clear_globs=False)
        if runner.failures:
            raise AssertionError(f"{block.where}: doctest failed\n{out.getvalue()}")
        return
    stdout = io.StringIO()
    code = compile(block.code, block.where, "exec")
    with contextlib.redirect_stdout(stdout):
        exec(code, namespace)
    if block.expected is not None:
        _check(block, block.expected.code, stdout.getvalue())


def _run_command(block: Block, command: str):
    argv = shlex.split(command)
    if not argv or argv[0] != "elcvx":
        raise ValueError(f"{block.where}: output-of runs only elcvx commands, not {command!r}")
    from elcvx.__main__ import main

    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        status = main(argv[1:])
    assert status == 0, f"{block.where}: {command!r} exited with status {status}"
    _check(block, block.code, stdout.getvalue())


def run_page(path: Path, *, self_contained: bool = False) -> int:
    """Run a page's blocks; return how many Python blocks and output-of commands were checked.

    Only the blocks' visible text runs. With ``self_contained`` each block runs in a fresh
    namespace (and from the working directory the page started in), else in the page's one.
    """
    namespace = {"__name__": "__docs__"}
    start = os.getcwd()
    checked = 0
    for block in parse(path):
        skip = [arg for kind, arg in block.markers if kind == "skip"]
        for kind, arg in block.markers:
            if kind == "output-of" and not skip:
                _run_command(block, arg)
                checked += 1
        if block.lang in PYTHON and not skip:
            if self_contained:
                namespace = {"__name__": "__docs__"}
                os.chdir(start)
            _run_python(block, namespace)
            checked += 1
    return checked


def _runnable_by_text(text: str) -> int:
    """Python fences plus output-of markers, minus skip markers, counted on the raw text."""
    fences = re.findall(r"^[ \t]*(?:```|~~~)[ \t]*(?:python|py|pycon)[ \t]*$", text, re.M)
    return len(fences) + text.count("docs-test: output-of") - text.count("docs-test: skip")


@pytest.mark.parametrize("path", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_page(path, monkeypatch):
    # run_page raises AssertionError when a block's shown output differs from what it prints;
    # and every runnable block of the page must have been run (none lost by the parser).
    monkeypatch.chdir(ROOT)
    try:
        checked = run_page(path, self_contained=path in SELF_CONTAINED)
    except ModuleNotFoundError as exc:
        # A page whose blocks use an optional stack (Dask, Spark, ...) runs with its extra
        # (`make test-dask`, ...); without it, the page is skipped from that block on.
        if (exc.name or "").split(".")[0] not in EXTRAS:
            raise
        pytest.skip(f"{path.relative_to(ROOT)}: {skip_reason(exc.name)}")
    assert checked == _runnable_by_text(path.read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------------------------
# The convention itself
# ------------------------------------------------------------------------------------------------
def test_parser_links_output_and_markers(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "Intro.\n\n"
        "```python\nx = 2\nprint(x + 1)\n```\n\n"
        "```text\n3\n```\n\n"
        "Prose breaks the link.\n\n"
        "```text\nnot an output\n```\n\n"
        "<!-- docs-test: skip: needs a GPU -->\n"
        "```python\nraise SystemExit\n```\n\n"
        "  ```python\n  >>> x * 10\n  20\n  ```\n",
        encoding="utf-8",
    )
    blocks = parse(page)
    assert [b.lang for b in blocks] == ["python", "text", "text", "python", "python"]
    assert blocks[0].markers == [] and blocks[0].expected is blocks[1]
    assert blocks[3].markers == [("skip", "needs a GPU")]
    run_page(page)  # the skipped block does not run, the indented doctest sees x
    page.write_text("```python\nprint(1)\n```\n```text\n2\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="output differs"):
        run_page(page)
    page.write_text("<!-- docs-test: skip: -->\n```python\n1\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match="needs a reason"):
        parse(page)


TWO_BLOCKS = "```python\nx = 2\n```\n\nProse.\n\n```python\nprint(x)\n```\n"


@pytest.mark.parametrize("text, self_contained, error, match", [
    # a set-up marker is an error (issue 17: the README's "Use" block took its data from one, so
    # a reader's copy raised NameError)
    ("<!-- docs-test: setup\nx = 2\n-->\n```python\nprint(x)\n```\n", False, ValueError,
     "hidden set-up"),
    ("<!--\nx = 2\n-->\n```python\nprint(x)\n```\n", False, NameError, "'x'"),  # prose
    (TWO_BLOCKS, True, NameError, "'x'"),  # a README block copied alone lacks the earlier one's x
])
def test_only_visible_text_runs(tmp_path, text, self_contained, error, match):
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    with pytest.raises(error, match=match):
        run_page(page, self_contained=self_contained)


def test_notebook_pages_share_a_namespace(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(TWO_BLOCKS, encoding="utf-8")
    assert run_page(page) == 2


def test_no_page_uses_hidden_setup():
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"<!--\s*docs-test:\s*setup", text), \
            f"{path.relative_to(ROOT)}: hidden set-up; put the code in a visible block"


def test_every_page_has_no_stray_markers():
    # A marker must sit right before a fence; one followed by prose would be silently ignored.
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        for m in LINE_MARKER.finditer(text):
            rest = text[m.end():].lstrip("\n ")
            assert rest.startswith(("```", "~~~", "<!-- docs-test")), \
                f"{path.relative_to(ROOT)}: docs-test marker not followed by a code block"


# ------------------------------------------------------------------------------------------------
# The site
# ------------------------------------------------------------------------------------------------
def test_site_builds_strict(tmp_path):
    # `mkdocs build --strict` (the `docs` extra): a broken link or anchor, a page missing from the
    # nav, or a docstring that mkdocstrings cannot parse is an error. About 3 s.
    for module in ("mkdocs", "material", "mkdocstrings_handlers.python"):
        need(module)
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "Set-up on a fresh machine" in index  # the README is the home page
    assert 'href="cli/"' in index and 'href="docs/' not in index  # its links made relative
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="elcvx.estimate.estimate"' in api and ":func:`" not in api


# ------------------------------------------------------------------------------------------------
# README.md's shell blocks, as a new user runs them after the two set-up commands
# ------------------------------------------------------------------------------------------------
VENV_ELCVX = ROOT / ".venv" / "bin" / "elcvx"


def _fresh_shell_env() -> dict:
    """The environment of a new terminal: no virtual environment active, .venv/bin not on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    ours = {str(ROOT / ".venv" / "bin"), os.path.dirname(sys.executable)}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if p and os.path.abspath(p) not in ours)
    env["COLUMNS"] = "100"
    return env


def _readme_shell_blocks():
    return [b for b in parse(ROOT / "README.md") if b.lang in SHELL]


def _check_line(block: Block, line: str):
    """A line of a shell-check block: ``make TARGET ...`` must be a target make can run (``make
    -n``), ``.venv/bin/elcvx ARGS`` must be accepted by the command's parser."""
    from elcvx.__main__ import build_parser

    argv = shlex.split(line, comments=True)
    if not argv:
        return
    if argv[0] == "make":
        out = subprocess.run(["make", "-n", *argv[1:]], cwd=ROOT, capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 0, f"{block.where}: {line!r}: {out.stderr[-500:]}"
    elif argv[0] == ".venv/bin/elcvx":
        build_parser().parse_args(argv[1:])  # raises UsageError on an unknown option or value
    else:
        raise AssertionError(f"{block.where}: {line!r} is neither make nor .venv/bin/elcvx")


def test_readme_shell_blocks_run_as_written(tmp_path):
    # Issue 27: the README said `elcvx evaluate ...`, which answers "command not found" in a new
    # terminal (nothing said to activate .venv). Each block runs in a fresh bash from the root.
    blocks = _readme_shell_blocks()
    assert len(blocks) >= 3
    ran = checked = 0
    for block in blocks:
        reasons = [arg for kind, arg in block.markers if kind == "shell-check"]
        if reasons:
            for line in block.code.splitlines():
                _check_line(block, line)
            checked += 1
            continue
        if not VENV_ELCVX.exists():
            pytest.skip("no .venv/bin/elcvx: the README's commands run after `make test`, which "
                        "creates .venv")
        out = subprocess.run(["bash", "-c", block.code], cwd=ROOT, env=_fresh_shell_env(),
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, f"{block.where}: exit {out.returncode}\n{out.stderr[-2000:]}"
        if block.expected is not None:
            _check(block, block.expected.code, out.stdout)
        ran += 1
    assert ran >= 1 and checked >= 1


def test_a_readme_shell_block_that_fails_is_caught(tmp_path, monkeypatch):
    # The check can fail: the command the README used to print, in a fresh shell.
    if not VENV_ELCVX.exists():
        pytest.skip("no .venv/bin/elcvx (made by `make test`)")
    out = subprocess.run(["bash", "-c", "elcvx evaluate elcvx/data/example_log.csv"], cwd=ROOT,
                         env={**_fresh_shell_env(), "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 127 and "command not found" in out.stderr
    block = Block(ROOT / "README.md", 1, "console", "make no-such-target\n")
    with pytest.raises(AssertionError, match="no-such-target"):
        _check_line(block, "make no-such-target")
    with pytest.raises(Exception):
        _check_line(block, ".venv/bin/elcvx evaluate --no-such-option")
