// The conformance suite's client cannot send headers of its own, and `airlock mcp --http`
// refuses every request without the bearer token. This proxy, on loopback, forwards each
// request byte for byte (method, path, every header including Host and Origin, the body)
// and adds only `Authorization: Bearer <token>`, as a configured client would; the
// answer streams back unchanged. So the suite meets the real guard: the DNS-rebinding
// scenario's foreign Host still reaches airlock and is refused there.
import http from 'node:http';

/**
 * @param {string} target the airlock URL's origin, e.g. http://127.0.0.1:41234
 * @param {string} token the bearer token
 * @returns {Promise<{origin: string, close: () => Promise<void>}>}
 */
export async function startAuthProxy(target, token) {
  const up = new URL(target);
  const server = http.createServer((req, res) => {
    const headers = {};
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i];
      if (name.toLowerCase() === 'authorization') continue; // the suite never sends one
      // Node takes a repeated header as an array, but Host only as one string.
      if (name.toLowerCase() === 'host') headers[name] = req.rawHeaders[i + 1];
      else (headers[name] ??= []).push(req.rawHeaders[i + 1]);
    }
    headers.Authorization = `Bearer ${token}`;
    const fwd = http.request(
      { host: up.hostname, port: up.port, method: req.method, path: req.url, headers, setHost: false },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.rawHeaders);
        upRes.pipe(res);
      },
    );
    fwd.on('error', (err) => {
      res.writeHead(502, { 'Content-Type': 'text/plain' });
      res.end(`auth proxy: ${err.message}`);
    });
    req.pipe(fwd);
    res.on('close', () => fwd.destroy());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
