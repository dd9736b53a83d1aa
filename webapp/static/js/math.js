/* Typesets the math of rendered statements with KaTeX (static/vendor/katex, installed from npm by
   scripts/dev.sh bootstrap). curation/rendering.py marks every formula it recognised ($...$, $$...$$,
   \(...\), \[...\], $$$...$$$) as <span|div class="math ..."> holding escaped TeX between \( \) or
   \[ \]; only those elements are typeset, so a dollar sign in prose ("$7 + $5") stays text. A formula
   KaTeX cannot parse is shown as its source, in red, with the error as its title. */
(function () {
  "use strict";
  function typeset() {
    if (typeof window.renderMathInElement !== "function") {
      return; /* KaTeX not installed (npm ci not run): the TeX source stays readable */
    }
    var options = {
      delimiters: [
        {left: "\\[", right: "\\]", display: true},
        {left: "\\(", right: "\\)", display: false}
      ],
      throwOnError: false,
      strict: "ignore"
    };
    document.querySelectorAll(".math").forEach(function (element) {
      window.renderMathInElement(element, options);
    });
    document.documentElement.dataset.mathTypeset = "1";
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", typeset);
  } else {
    typeset();
  }
})();
