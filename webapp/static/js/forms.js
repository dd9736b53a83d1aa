/* Small form behaviours without inline handlers (the content security policy forbids them):
   <form data-confirm="Question?"> asks before submitting; <select data-autosubmit> submits its form
   when changed. */
(function () {
  "use strict";
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
      event.preventDefault();
    }
  });
  document.addEventListener("change", function (event) {
    var field = event.target;
    if (field instanceof HTMLElement && field.hasAttribute("data-autosubmit") && field.form) {
      field.form.submit();
    }
  });
})();
