// Typesets the site's mathematics with the KaTeX copy served from the site itself
// (docs/assets/katex/, no CDN: the pages read offline). pymdownx.arithmatex (generic mode) wraps
// inline math as <span class="arithmatex">\(...\)</span> and display math as
// <div class="arithmatex">\[...\]</div>; each is replaced by KaTeX's rendering. A formula KaTeX
// cannot parse is left as its TeX source, shown in red, instead of stopping the page.
(function () {
  "use strict";

  function typeset(root) {
    if (typeof katex === "undefined") return;
    root.querySelectorAll(".arithmatex").forEach(function (el) {
      if (el.hasAttribute("data-typeset")) return;  // already rendered
      el.setAttribute("data-typeset", "");
      var tex = el.textContent.trim();
      var display = el.tagName === "DIV";
      var m = /^\\\(([\s\S]*)\\\)$/.exec(tex) || /^\\\[([\s\S]*)\\\]$/.exec(tex);
      if (m) tex = m[1];
      katex.render(tex, el, { displayMode: display, throwOnError: false });
    });
  }

  // mkdocs-material publishes each page load as `document$` (also with instant navigation).
  if (typeof document$ !== "undefined") {
    document$.subscribe(function () { typeset(document); });
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { typeset(document); });
  } else {
    typeset(document);
  }
})();
