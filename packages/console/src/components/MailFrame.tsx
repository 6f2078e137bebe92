/** A mail's HTML, shown in a sandboxed frame: no scripts, no access to the console; links open in a new tab. */
export function MailFrame({ html, title }: { html: string; title: string }) {
  const doc = `<!doctype html><html><head><meta charset="utf-8"><base target="_blank"></head><body>${html}</body></html>`;
  return (
    <iframe
      title={title}
      sandbox="allow-popups allow-popups-to-escape-sandbox"
      srcDoc={doc}
      referrerPolicy="no-referrer"
      className="h-80 w-full rounded-md border border-line bg-white"
    />
  );
}
