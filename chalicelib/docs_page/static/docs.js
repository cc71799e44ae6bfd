// Starts Swagger UI (vendored swagger-ui-bundle.js) on this deployment's OpenAPI document.
// A file of its own, not an inline script: the page's Content-Security-Policy allows scripts from 'self' only.
window.addEventListener("DOMContentLoaded", function () {
  window.ui = SwaggerUIBundle({
    url: document.body.dataset.openapiUrl,
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    defaultModelsExpandDepth: 0,
    docExpansion: "list",
    filter: true,
    persistAuthorization: false,
  });
});
