/** How often the webhooks and their log are read again while the page is open (deliveries move on their own). */
export const WEBHOOK_POLL_MS = 2_000;
