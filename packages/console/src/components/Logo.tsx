/**
 * The Plinth mark: three stacked slabs, a pedestal (the favicon in index.html is the same
 * drawing). In the accent colour, so it follows light and dark.
 */
export function LogoMark({ className = 'h-6 w-6' }: { className?: string }) {
  return (
    <svg viewBox="0 0 32 32" className={`${className} text-accent`} aria-hidden="true" focusable="false">
      <rect x="10" y="4" width="12" height="7" rx="1.5" fill="currentColor" opacity="0.55" />
      <rect x="6.5" y="13" width="19" height="6.5" rx="1.5" fill="currentColor" opacity="0.8" />
      <rect x="3" y="21.5" width="26" height="6.5" rx="1.5" fill="currentColor" />
    </svg>
  );
}
