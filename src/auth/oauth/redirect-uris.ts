// Which redirect URIs a client may register (docs/authentication.md#oauth-2): https anywhere, or plain http on loopback
// only (a native app or a CLI listening on its own machine). Never a fragment (RFC 6749 3.1.2).
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Why the URI cannot be registered, or undefined when it can. */
export function redirectUriProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.hash !== '' || value.includes('#')) return 'must not have a fragment (#…)';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return 'must be https, or http on a loopback address (127.0.0.1, [::1], localhost)';
}
