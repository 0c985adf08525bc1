// A QR code made in the browser (the qrcode package, loaded on demand) as a data: image (CSP img-src allows data:).
import { useEffect, useState } from 'preact/hooks';

export function QrCode({ text, label, testId }: { text: string; label: string; testId?: string }) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    void import('qrcode').then((mod) =>
      (mod.default ?? mod).toDataURL(text, { margin: 1, width: 200 }).then((url: string) => {
        if (live) setSrc(url);
      }),
    );
    return () => {
      live = false;
    };
  }, [text]);
  return src ? <img class="qr" src={src} alt={label} width={200} height={200} data-testid={testId} /> : <span class="qr qr-pending" />;
}
