import { STATUS_CODES, maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { errorBody } from './errors.js';

// Errors Node's HTTP parser raises before any request exists (headers over the limit, a malformed request line, a
// request that never completes): answered in the spec's error shape with `Connection: close`, then the socket is
// ended, not destroyed. Ending flushes the answer and lets the client read it; a destroy with the client's bytes still
// unread makes the kernel send a reset, which the client sees as ECONNRESET instead of the answer.

/** How long an ended socket may stay half-open (the client still sending) before it is destroyed. */
const LINGER_MS = 5_000;

function clientErrorFor(code: string | undefined): ApiError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(
        431,
        'invalid_request_error',
        'request_header_too_large',
        `The request headers are larger than the limit (${maxHeaderSize} bytes).`,
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(408, 'invalid_request_error', 'request_timeout', 'The request was not received in time.');
    default:
      return new ApiError(400, 'invalid_request_error', 'invalid_request', 'The request is not valid HTTP/1.1.');
  }
}

/** A Fastify `clientErrorHandler`. The parser reports each later chunk of a refused connection again: answered once. */
export function createClientErrorHandler(docsUrl: string, log: (err: Error, code: string) => void) {
  const answered = new WeakSet<Socket>();
  return (err: Error & { code?: string }, socket: Socket): void => {
    if (answered.has(socket)) return;
    answered.add(socket);
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const apiErr = clientErrorFor(err.code);
    log(err, apiErr.code);
    // A response already under way on this connection cannot be followed by another status line.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const requestId = newId('req');
    const body = JSON.stringify(errorBody(apiErr, requestId, docsUrl));
    socket.end(
      `HTTP/1.1 ${apiErr.status} ${STATUS_CODES[apiErr.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `Request-Id: ${requestId}\r\n` +
        'Cache-Control: no-store\r\n' +
        'Connection: close\r\n\r\n' +
        body,
    );
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
}
