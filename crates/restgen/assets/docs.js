// The reference page: Swagger UI over the document the page names. A file of its own,
// not inline, so that the page's Content-Security-Policy can refuse every inline script.
window.addEventListener("load", function () {
  var root = document.getElementById("reference");
  window.ui = SwaggerUIBundle({
    url: root.dataset.document,
    domNode: root,
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    // Nothing is sent elsewhere: no validator badge, no link to an online editor.
    validatorUrl: null,
    // "Try it out" open at once, with each answer's time shown.
    tryItOutEnabled: true,
    displayRequestDuration: true,
    // Credentials live as long as the tab: never written to localStorage.
    persistAuthorization: false,
  });
});
