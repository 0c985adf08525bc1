import QRCode from 'qrcode';

// QR codes as SVG markup, generated on the server (no client library, no image request). Error correction M and
// the standard 4-module quiet zone, which phone cameras need. The xmlns attribute is dropped: inline SVG in HTML needs
// none, and the page then carries no URL at all.
export async function qrSvg(text: string): Promise<string> {
  const svg = await QRCode.toString(text, {
    type: 'svg',
    errorCorrectionLevel: 'M',
    margin: 4,
    color: { dark: '#000000', light: '#ffffff' },
  });
  return svg
    .replace(/\s*xmlns="[^"]*"/, '')
    .replace('<svg', '<svg class="qr-svg" aria-hidden="true" focusable="false"')
    .trim();
}
