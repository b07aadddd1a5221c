/**
 * A counting TCP proxy for the sync benchmark: it forwards bytes untouched (so SigV4 signatures,
 * which cover the Host header, still verify) and counts the HTTP request lines the clients send.
 * It is the one request counter that works the same for every tool, rclone included; runs
 * through it are used for counting only, never timed.
 *
 * @module
 */

/** A running proxy. */
export interface CountingProxy {
  /** `http://127.0.0.1:PORT` of the proxy. */
  endpoint: string;
  /** Requests seen since the last reset, by method. */
  counts(): Record<string, number>;
  /** Total requests seen since the last reset. */
  total(): number;
  /** Forgets the counts. */
  reset(): void;
  /** Stops listening (open connections end with their clients). */
  stop(): void;
}

/** An HTTP/1.x request line. Bodies here are file contents that never contain one. */
const REQUEST_LINE = /(GET|PUT|HEAD|POST|DELETE) [^ \r\n]+ HTTP\/1\.[01]\r\n/g;
/** Bytes of the previous chunk kept, so a request line split across chunks is still seen. */
const CARRY = 2048;

/**
 * Starts a proxy on a free loopback port in front of `upstreamPort`.
 *
 * @param upstreamPort the real server's port on 127.0.0.1
 */
export function startCountingProxy(upstreamPort: number): CountingProxy {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let counts: Record<string, number> = {};
  const counter = () => {
    let carry = "";
    return new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        // latin1 keeps one char per byte, so offsets match and no byte is lost.
        const text = carry + new TextDecoder("latin1").decode(chunk);
        for (const match of text.matchAll(REQUEST_LINE)) {
          // Count a line only once: when it ends in this chunk, not in the carried part.
          if (match.index + match[0].length > carry.length) {
            counts[match[1]] = (counts[match[1]] ?? 0) + 1;
          }
        }
        carry = text.slice(-CARRY);
        controller.enqueue(chunk);
      },
    });
  };
  const serve = async () => {
    for await (const client of listener) {
      (async () => {
        let upstream: Deno.TcpConn | undefined;
        try {
          upstream = await Deno.connect({ hostname: "127.0.0.1", port: upstreamPort });
          await Promise.allSettled([
            client.readable.pipeThrough(counter()).pipeTo(upstream.writable),
            upstream.readable.pipeTo(client.writable),
          ]);
        } catch {
          // A client that went away mid-request: nothing to count or forward.
        } finally {
          for (const c of [client, upstream]) {
            try {
              c?.close();
            } catch {
              // already closed by a finished pipe
            }
          }
        }
      })();
    }
  };
  serve().catch(() => {});
  const port = (listener.addr as Deno.NetAddr).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    counts: () => ({ ...counts }),
    total: () => Object.values(counts).reduce((a, b) => a + b, 0),
    reset: () => counts = {},
    stop: () => listener.close(),
  };
}
