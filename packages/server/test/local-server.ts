import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export interface LocalServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  close(): Promise<void>;
}

/**
 * A node:http server on a free loopback port whose handler gets the whole request body as
 * text: the local peers (SMS webhook sink, fake providers) the end-to-end tests talk to.
 * @example const s = await startLocalServer((req, res, body) => res.end(body)); … await s.close();
 */
export async function startLocalServer(handle: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<LocalServer> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => handle(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const addr = server.address();
  return {
    origin: `http://127.0.0.1:${addr && typeof addr === 'object' ? addr.port : 0}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
