import { encodePath } from '@plinth/sdk';
import { useEffect, useRef, useState } from 'react';
import { fetchBlob } from '../../lib/api';

/** What the server's transforms read (docs/storage.md, "Image transforms"); SVG and others get no thumbnail. */
const TRANSFORMABLE = /^image\/(jpeg|png|webp|gif|avif|tiff)\b/;

/** Whether a file of this type gets a thumbnail. */
export const hasThumbnail = (type: string | null | undefined) => TRANSFORMABLE.test(type ?? '');

/**
 * A 32-pixel thumbnail of an image object, made by the server's transforms (64 pixels square
 * for sharp screens, WebP when the browser takes it) and fetched only once its row is near the
 * screen: a folder of a thousand photos costs a thousand small transforms only as it is
 * scrolled. Fetched with the console's header (an `<img>` to the API URL would carry the
 * cookie without it: refused) and shown from a blob URL, revoked when the row goes.
 */
export function Thumbnail(props: { bucket: string; name: string }) {
  const box = useRef<HTMLSpanElement>(null);
  const [near, setNear] = useState(false);
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    if (typeof IntersectionObserver === 'undefined') {
      setNear(true);
      return;
    }
    const seen = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) {
          setNear(true);
          seen.disconnect();
        }
      },
      { rootMargin: '200px' },
    );
    seen.observe(el);
    return () => seen.disconnect();
  }, []);
  useEffect(() => {
    if (!near) return;
    const abort = new AbortController();
    let made: string | null = null;
    const path = `/api/v1/storage/object/${encodeURIComponent(props.bucket)}/${encodePath(props.name)}`;
    fetchBlob(`${path}?width=64&height=64&resize=cover&quality=70`, abort.signal).then(
      (blob) => {
        made = URL.createObjectURL(blob);
        setUrl(made);
      },
      () => undefined, // no thumbnail (a picture the server cannot read): the empty square stays
    );
    return () => {
      abort.abort();
      if (made) URL.revokeObjectURL(made);
    };
  }, [near, props.bucket, props.name]);
  return (
    <span ref={box} className="inline-block h-8 w-8 shrink-0 overflow-hidden rounded bg-muted" data-thumbnail={props.name}>
      {url && <img src={url} alt="" className="h-8 w-8 object-cover" />}
    </span>
  );
}
