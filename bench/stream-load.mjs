// A keep-alive HTTP load for large answers, used by the bench for the 1 MiB downloads.
// autocannon parses every answer in JavaScript and, on this 2-core machine, tops out near 90
// streamed 1 MiB answers per second whatever serves them (bare node:http and node:fs included),
// while this client, which only counts the bytes, takes about 1,100 from the same server: with
// autocannon the ratio measured the load generator, not Plinth. Its result has the fields of
// autocannon's that the bench reads.
import http from 'node:http';

/**
 * `connections` loops, each sending the request again as soon as the answer has ended, for
 * `duration` seconds.
 * @example await streamLoad({ url, headers: { authorization: 'Bearer …' }, connections: 32, duration: 5 })
 */
export async function streamLoad({ url, headers = {}, connections, duration }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const latencies = [];
  const statusCodeStats = {};
  let non2xx = 0;
  let errors = 0;
  let timeouts = 0;
  const start = performance.now();
  const end = start + duration * 1000;
  const one = () =>
    new Promise((resolve) => {
      const t0 = performance.now();
      let done = false;
      const finish = (kind) => {
        if (done) return;
        done = true;
        if (kind === 'error') errors++;
        if (kind === 'timeout') timeouts++;
        resolve();
      };
      const req = http.request(url, { headers, agent, timeout: 10_000 }, (res) => {
        res.resume();
        res.on('end', () => {
          latencies.push(performance.now() - t0);
          const code = String(res.statusCode);
          statusCodeStats[code] = { count: (statusCodeStats[code]?.count ?? 0) + 1 };
          if (res.statusCode < 200 || res.statusCode > 299) non2xx++;
          finish('ok');
        });
        res.on('error', () => finish('error'));
      });
      req.on('timeout', () => {
        finish('timeout');
        req.destroy();
      });
      req.on('error', () => finish('error'));
      req.end();
    });
  const loop = async () => {
    while (performance.now() < end) await one();
  };
  await Promise.all(Array.from({ length: connections }, loop));
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (p) =>
    latencies.length ? Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] * 10) / 10 : 0;
  return {
    duration: (performance.now() - start) / 1000,
    requests: { total: latencies.length },
    latency: { p50: at(0.5), p99: at(0.99) },
    non2xx,
    errors,
    timeouts,
    statusCodeStats,
  };
}
