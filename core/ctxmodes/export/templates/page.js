(function () {
  "use strict";
  var buttons = document.querySelectorAll("[data-filter]");
  buttons.forEach(function (button) {
    button.addEventListener("click", function () {
      buttons.forEach(function (other) {
        document.body.classList.remove("f-" + other.getAttribute("data-filter"));
      });
      document.body.classList.add("f-" + button.getAttribute("data-filter"));
      buttons.forEach(function (other) {
        other.setAttribute("aria-pressed", other === button ? "true" : "false");
      });
    });
  });
  function unfold(target) {
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
  }
  // Search: a case-insensitive substring over every entry of the page, archived windows and
  // folded branches included; Enter and Shift+Enter step through the matches.
  var input = document.getElementById("search");
  var count = document.getElementById("hits");
  var articles = Array.prototype.slice.call(document.querySelectorAll("main article"));
  var texts = null;
  var found = [];
  var current = -1;
  function step(delta) {
    if (!found.length) { return; }
    if (current >= 0) { found[current].classList.remove("current"); }
    current = (current + delta + found.length) % found.length;
    var article = found[current];
    article.classList.add("current");
    unfold(article);
    article.scrollIntoView({ block: "center" });
    count.textContent = (current + 1) + " of " + found.length;
  }
  function search() {
    var query = input.value.trim().toLowerCase();
    if (texts === null) {
      texts = articles.map(function (article) { return article.textContent.toLowerCase(); });
    }
    found = [];
    current = -1;
    articles.forEach(function (article, index) {
      article.classList.remove("current");
      var hit = query !== "" && texts[index].indexOf(query) !== -1;
      article.classList.toggle("hit", hit);
      if (hit) { found.push(article); }
    });
    document.body.classList.toggle("searching", query !== "");
    count.textContent = query === "" ? "" : found.length === 1 ? "1 match" : found.length + " matches";
    step(1);
  }
  input.addEventListener("input", search);
  input.addEventListener("keydown", function (event) {
    if (event.key === "Enter") {
      event.preventDefault();
      step(event.shiftKey ? -1 : 1);
    }
  });
  // Following a link into a folded branch unfolds what holds the target.
  document.querySelectorAll('nav a[href^="#e-"]').forEach(function (link) {
    link.addEventListener("click", function () {
      unfold(document.getElementById(link.getAttribute("href").slice(1)));
    });
  });
})();
