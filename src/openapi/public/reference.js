// Starts the API reference on the element that names its OpenAPI document. The configuration lives in this
// served file, not inline, so the page's Content-Security-Policy allows no inline script at all.
(function () {
  'use strict';
  var mount = document.getElementById('reference');
  // Choosing a revision reloads the page at it; without JavaScript the form's button does the same.
  var select = document.getElementById('revision');
  if (select) select.addEventListener('change', function () { select.form.submit(); });
  if (!mount || typeof Scalar === 'undefined') return;
  Scalar.createApiReference('#reference', {
    url: mount.getAttribute('data-openapi-url'),
    // Everything from this host, nothing from another: no web fonts from Scalar's CDN, no telemetry, no
    // request proxy (test requests go straight to this API, the same origin), no hosted AI agent or MCP.
    withDefaultFonts: false,
    telemetry: false,
    proxyUrl: '',
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: 'never',
    hideClientButton: true,
    persistAuth: false,
    documentDownloadType: 'json',
    // Stable anchors `#tag/<tag>/<operationId>`, which the error pages and the revisions page link to.
    generateOperationSlug: function (operation) { return operation.operationId; },
  });
})();
