// Raw-socket HTTP for the fuzz corpus: writes exactly the bytes a case names (optionally in
// pieces, with pauses: a slow sender), then waits — bounded — for the first status line or
// for the server to close the connection.
import net from 'node:net';

export interface RawAnswer {
  /** Status of the first response, if one came. */
  status?: number;
  /** The server closed the connection (after an answer or instead of one). */
  closed: boolean;
  /** Nothing within the bound: the server left this client hanging. */
  timedOut: boolean;
  ms: number;
  /** The first bytes of the answer, for assertion messages. */
  head: string;
}

export interface RawRequest {
  /** The bytes to send, or pieces sent one after the other `pauseMs` apart. */
  send: string | Buffer | (string | Buffer)[];
  pauseMs?: number;
  /** Bound on the answer, from the first byte sent. */
  timeoutMs: number;
  /** Keep reading until the server closes (default: stop at the first status line). */
  untilClose?: boolean;
}

export function rawExchange(port: number, r: RawRequest): Promise<RawAnswer> {
  const pieces = Array.isArray(r.send) ? r.send : [r.send];
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let done = false;
    const finish = (extra: Partial<RawAnswer>): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(received);
      resolve({
        closed: false,
        timedOut: false,
        ...(m?.[1] !== undefined ? { status: Number(m[1]) } : {}),
        ms: performance.now() - started,
        head: received.slice(0, 200),
        ...extra,
      });
    };
    const timer = setTimeout(() => finish({ timedOut: true }), r.timeoutMs);
    socket.on('data', (d: Buffer) => {
      received += d.toString('latin1');
      if (!r.untilClose && /^HTTP\/1\.[01] \d{3}[^\r]*\r\n/.test(received)) {
        // 1xx is not the answer (100-continue): wait for the final status line.
        if (!/^HTTP\/1\.[01] 1\d\d/.test(received)) finish({});
        else received = received.replace(/^HTTP\/1\.[01] 1\d\d[^]*?\r\n\r\n/, '');
      }
    });
    socket.on('close', () => finish({ closed: true }));
    socket.on('error', () => finish({ closed: true }));
    socket.once('connect', () => {
      void (async () => {
        for (const [i, piece] of pieces.entries()) {
          if (done || socket.destroyed) return;
          if (i > 0 && r.pauseMs) await new Promise((res) => setTimeout(res, r.pauseMs));
          if (!socket.destroyed) socket.write(piece);
        }
      })();
    });
  });
}

/** A POST of `body` (JSON text) to `path` with well-formed framing. */
export function post(path: string, body: string, headers: Record<string, string> = {}): string {
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return (
    `POST ${path} HTTP/1.1\r\nHost: ingress\r\ncontent-type: application/json\r\n${extra}` +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** A POST of raw body bytes (not necessarily UTF-8) to `path`. */
export function postBytes(path: string, body: Buffer): Buffer {
  const head = `POST ${path} HTTP/1.1\r\nHost: ingress\r\ncontent-length: ${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}
