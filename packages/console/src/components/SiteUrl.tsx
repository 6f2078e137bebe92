/**
 * The site URL explained where it is shown: the server's PUBLIC_URL, which email links, social
 * sign-in callbacks and token issuers are made from, set in the server's environment.
 */
export function SiteUrlNote({ url }: { url: string }) {
  return (
    <p className="text-xs text-fg-muted" data-testid="site-url-note">
      <code>{url || '…'}</code> is the site URL: the server’s <code>PUBLIC_URL</code>. Links in emails, social sign-in callbacks and the
      issuer of access tokens are made from it, so it must be the address users reach the server at. It is set in the server’s environment (
      <code>PUBLIC_URL=https://api.example.com</code>), not here: change it there and restart.
    </p>
  );
}
