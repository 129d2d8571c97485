// The list of an article's sections in its side panel ("On this page"):
// a link to each second- and third-level heading of the main text.
document.addEventListener("DOMContentLoaded", function () {
  var nav = document.getElementById("toc");
  if (!nav) return;
  var list = document.createElement("ul");
  list.className = "nav nav-pills flex-column";
  document.querySelectorAll("main h2, main h3").forEach(function (h) {
    var section = h.closest("[id]");
    if (!section || h.hasAttribute("data-toc-skip")) return;
    var item = document.createElement("li");
    item.className = "nav-item" + (h.tagName === "H3" ? " ms-3" : "");
    var link = document.createElement("a");
    link.className = "nav-link";
    link.href = "#" + section.id;
    link.textContent = h.textContent;
    item.appendChild(link);
    list.appendChild(item);
  });
  nav.appendChild(list);
});
