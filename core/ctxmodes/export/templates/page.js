(function () {
  "use strict";
  var buttons = document.querySelectorAll("[data-filter]");
  buttons.forEach(function (button) {
    button.addEventListener("click", function () {
      document.body.className = "f-" + button.getAttribute("data-filter");
      buttons.forEach(function (other) {
        other.setAttribute("aria-pressed", other === button ? "true" : "false");
      });
    });
  });
  // Following a link into a folded branch unfolds what holds the target.
  document.querySelectorAll('nav a[href^="#e-"]').forEach(function (link) {
    link.addEventListener("click", function () {
      var target = document.getElementById(link.getAttribute("href").slice(1));
      for (var node = target; node; node = node.parentElement) {
        if (node.tagName === "DETAILS") { node.open = true; }
      }
    });
  });
})();
