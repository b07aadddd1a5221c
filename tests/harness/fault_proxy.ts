/**
 * A fault-injecting S3 proxy on loopback, between the adapter and a real S3 server (moto, which
 * does not check request signatures, so the proxy can forward them as they are).
 *
 * Faults per request: a 500/503/429 answered without forwarding, the same answered after the
 * request reached the server (an ambiguous failure: the write may have happened), a connection
 * reset with no answer, a truncated body, a latency spike, and a listing that fails on page k.
 * Decisions come from a hash of (seed, method, path with random UUIDs masked, n-th time this
 * request was seen), not from arrival order, so a failing run replays with the same seed
 * whatever the concurrency.
 *
 * @module
 */
import type { S3Server } from "./servers.ts";

/** What to inject, and how often. Rates are per request, in [0, 1]. */
export interface FaultPlan {
  /** Seed of every decision. */
  seed: number;
  /**
   * Forward conditional writes (`If-None-Match`, `If-Match`) one at a time. moto checks the
   * condition and stores the object in two steps, so two concurrent creates of one key can both
   * succeed (seen: two lock holders acquiring in the same millisecond, once in about twenty
   * lock-race rounds); S3 decides them atomically, and this gives moto that atomicity.
   */
  serializeConditionalWrites?: boolean;
  /**
   * Forward every request without its `If-Match` / `If-None-Match`: the server then behaves as
   * one that ignores conditional requests (some S3-compatible servers do).
   */
  dropConditions?: boolean;
  /** 500/503/429 before forwarding. */
  errorRate?: number;
  /** 500 after forwarding (the server did the work; the client sees a failure). */
  ambiguousRate?: number;
  /** Close the connection without answering. */
  resetRate?: number;
  /** Answer with a body cut short of its Content-Length. */
  truncateRate?: number;
  /** Delay the answer by `latencyMs`. */
  latencyRate?: number;
  /** The delay of a latency spike (default 300 ms). */
  latencyMs?: number;
  /** Fail the k-th ListObjectsV2 request (1-based) with a 500, every time it is asked. */
  failListPage?: number;
  /** Only inject on requests whose method is in this list (default: all). */
  methods?: string[];
  /**
   * Answer the first GET of each object whose path ends with one of these with a 404
   * `NoSuchKey`, though the object exists (a replica behind, a flaky proxy); later GETs are
   * forwarded.
   */
  transientNotFound?: string[];
  /**
   * Write answers' bodies at this many bytes per second (a slow link), in 16 KiB steps, to the
   * eligible requests.
   */
  throttleBytesPerSecond?: number;
  /**
   * A GET answer whose body is longer than this sends only this many bytes, then nothing more
   * until the client hangs up (a connection that stalls mid-body).
   */
  stallBodyAfterBytes?: number;
  /**
   * Answer the first `times` arrivals of each distinct request (method and target) that
   * `match` with a 500, before forwarding (`Infinity`: always). Deterministic, unlike the rates.
   */
  failRequests?: { match: (method: string, target: string) => boolean; times: number };
}

/** Counts of what the proxy did. */
export interface FaultStats {
  /** Requests received. */
  requests: number;
  /** Faults injected, by kind. */
  injected: Record<string, number>;
  /** Requests received, by HTTP method (a DELETE counts even when a fault ate it). */
  byMethod: Record<string, number>;
}

/** A running proxy. */
export interface FaultProxy {
  /** `http://127.0.0.1:PORT`. */
  endpoint: string;
  /** What it did so far. */
  stats: FaultStats;
  /** Changes the plan (e.g. to heal the network between runs). */
  setPlan(plan: FaultPlan): void;
  /**
   * Calls `action` once, when the `nth` request from now arrives: `"before"` it is forwarded
   * (the request is then dropped unanswered), or `"after"` its answer was written. Crash tests
   * kill the client here, so the kill lands at an exact point of the run, not by timing luck.
   */
  tripAt(nth: number, when: "before" | "after", action: () => void): void;
  /**
   * Holds the `nth` request from now before it is forwarded, until the returned function is
   * called: with `true` it is then forwarded, with `false` dropped unanswered (as for a client
   * killed while it waited). A client that must not get past a point of its run while a test
   * acts (a kill placed by something other than a request) waits here. Counted as `held` in
   * `stats.injected` when the request arrives.
   */
  holdAt(nth: number): (forward: boolean) => void;
  /**
   * Holds the first `count` requests that `match` until all of them have arrived, then lets them
   * go together (or after `timeoutMs`, so a client that died early cannot hang the test): racing
   * clients then provably read the same state, instead of overlapping by timing luck. Counted
   * as `barrier-filled` in `stats.injected` when all `count` arrived.
   */
  barrier(
    count: number,
    match: (method: string, target: string) => boolean,
    timeoutMs?: number,
  ): void;
  /** Stops it. */
  stop(): Promise<void>;
}

/** FNV-1a over a string, mixed with the seed: a stable per-request random number in [0, 1). */
function unit(seed: number, text: string): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return (h >>> 0) / 4294967296;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

async function readRequest(conn: Deno.Conn): Promise<{ head: string; body: Uint8Array } | null> {
  let buffer = new Uint8Array(0);
  const chunk = new Uint8Array(64 * 1024);
  const separator = encoder.encode("\r\n\r\n");
  let headEnd = -1;
  while (headEnd < 0) {
    const n = await conn.read(chunk);
    if (n === null) return null;
    const next = new Uint8Array(buffer.length + n);
    next.set(buffer);
    next.set(chunk.subarray(0, n), buffer.length);
    buffer = next;
    headEnd = indexOf(buffer, separator);
  }
  const head = decoder.decode(buffer.subarray(0, headEnd));
  const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? "0");
  let body = buffer.subarray(headEnd + 4);
  while (body.length < length) {
    const n = await conn.read(chunk);
    if (n === null) break;
    const next = new Uint8Array(body.length + n);
    next.set(body);
    next.set(chunk.subarray(0, n), body.length);
    body = next;
  }
  return { head, body: body.subarray(0, length) };
}

async function writeAll(conn: Deno.Conn, data: Uint8Array): Promise<void> {
  let written = 0;
  while (written < data.length) written += await conn.write(data.subarray(written));
}

function errorResponse(status: number): Uint8Array {
  const code = status === 404
    ? "NoSuchKey"
    : status === 429
    ? "SlowDown"
    : status === 503
    ? "ServiceUnavailable"
    : "InternalError";
  const body =
    `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>injected</Message></Error>`;
  return encoder.encode(
    `HTTP/1.1 ${status} Injected\r\ncontent-type: application/xml\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * Starts a proxy in front of `upstream`.
 *
 * @param upstream the real server, `http://127.0.0.1:PORT`
 * @param initial the fault plan
 */
export function startFaultProxy(upstream: string, initial: FaultPlan): FaultProxy {
  let plan = initial;
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const stats: FaultStats = { requests: 0, injected: {}, byMethod: {} };
  const seen = new Map<string, number>();
  let listPages = 0;
  const count = (kind: string) => (stats.injected[kind] = (stats.injected[kind] ?? 0) + 1);
  const open = new Set<Deno.Conn>();
  /** The tail of the conditional writes forwarded one at a time. */
  let conditionalQueue: Promise<void> = Promise.resolve();
  let trip: { at: number; when: "before" | "after"; action: () => void } | undefined;
  let hold:
    | { at: number; released: Promise<boolean>; release: (forward: boolean) => void }
    | undefined;
  let gate:
    | {
      count: number;
      match: (method: string, target: string) => boolean;
      waiting: (() => void)[];
      timer: ReturnType<typeof setTimeout>;
    }
    | undefined;
  const openGate = () => {
    if (!gate) return;
    clearTimeout(gate.timer);
    for (const release of gate.waiting) release();
    gate = undefined;
  };
  /** Fires the trip if this request is its moment; true when it fired. */
  const tripped = (n: number, when: "before" | "after"): boolean => {
    if (!trip || trip.at !== n || trip.when !== when) return false;
    const { action } = trip;
    trip = undefined;
    action();
    return true;
  };

  const handle = async (conn: Deno.Conn) => {
    open.add(conn);
    let n: number | undefined;
    try {
      const request = await readRequest(conn);
      if (!request) return;
      n = ++stats.requests;
      if (tripped(n, "before")) return;
      if (hold && hold.at === n) {
        count("held");
        const forward = await hold.released;
        if (!forward) return;
      }
      const [requestLine, ...headerLines] = request.head.split("\r\n");
      const [method, target] = requestLine.split(" ");
      if (gate && gate.match(method, target)) {
        const held = new Promise<void>((release) => gate!.waiting.push(release));
        if (gate.waiting.length >= gate.count) {
          count("barrier-filled");
          openGate();
        }
        await held;
      }
      stats.byMethod[method] = (stats.byMethod[method] ?? 0) + 1;
      // A random name in the path (push's conditional-write probe object is named by a fresh
      // UUID each run) would make every decision on it differ from run to run: decide on the
      // path with such names masked, so a seed replays.
      const stable = `${method} ${target.replace(UUID, "<uuid>")}`;
      const nth = (seen.get(stable) ?? 0) + 1;
      seen.set(stable, nth);
      if (plan.failRequests) {
        const exact = `${method} ${target}`;
        if (exact !== stable) seen.set(exact, (seen.get(exact) ?? 0) + 1);
      }
      const roll = unit(plan.seed, `${stable} #${nth}`);
      const eligible = !plan.methods || plan.methods.includes(method);
      const isList = method === "GET" && /[?&]list-type=2/.test(target);
      if (isList) listPages++;
      if (isList && plan.failListPage !== undefined && listPages === plan.failListPage) {
        count("list-page");
        await writeAll(conn, errorResponse(500));
        return;
      }
      const path = target.split("?")[0];
      if (
        method === "GET" && !isList && nth === 1 &&
        plan.transientNotFound?.some((suffix) => path.endsWith(suffix))
      ) {
        count("transient-404");
        await writeAll(conn, errorResponse(404));
        return;
      }
      if (
        plan.failRequests?.match(method, target) &&
        (seen.get(`${method} ${target}`) ?? 0) <= plan.failRequests.times
      ) {
        count("fail-request");
        await writeAll(conn, errorResponse(500));
        return;
      }
      let edge = 0;
      const hit = (rate = 0) => eligible && roll >= edge && roll < (edge += rate);
      if (hit(plan.errorRate)) {
        const status = [500, 503, 429][Math.floor(unit(plan.seed + 1, stable) * 3)];
        count(`error-${status}`);
        await writeAll(conn, errorResponse(status));
        return;
      }
      if (hit(plan.resetRate)) {
        count("reset");
        return; // closing without a word
      }
      const ambiguous = hit(plan.ambiguousRate);
      const truncate = !ambiguous && hit(plan.truncateRate);
      const slow = !ambiguous && !truncate && hit(plan.latencyRate);

      const headers = new Headers();
      for (const line of headerLines) {
        const at = line.indexOf(":");
        const name = line.slice(0, at).trim().toLowerCase();
        if (
          ["host", "connection", "content-length", "transfer-encoding", "expect"].includes(name)
        ) continue;
        if (plan.dropConditions && (name === "if-match" || name === "if-none-match")) {
          count("condition-dropped");
          continue;
        }
        headers.append(name, line.slice(at + 1).trim());
      }
      const send = async () => {
        const response = await fetch(`${upstream}${target}`, {
          method,
          headers,
          body: ["GET", "HEAD"].includes(method) ? undefined : (request.body as BufferSource),
        });
        return { response, body: new Uint8Array(await response.arrayBuffer()) };
      };
      const conditional = plan.serializeConditionalWrites &&
        (headers.has("if-none-match") || headers.has("if-match"));
      let sent: Awaited<ReturnType<typeof send>>;
      if (conditional) {
        const turn = conditionalQueue.then(send);
        conditionalQueue = turn.then(() => {}, () => {});
        sent = await turn;
      } else {
        sent = await send();
      }
      const { response, body } = sent;
      if (ambiguous) {
        count("ambiguous-500");
        await writeAll(conn, errorResponse(500));
        return;
      }
      if (slow) {
        count("latency");
        await new Promise((r) => setTimeout(r, plan.latencyMs ?? 300));
      }
      let head = `HTTP/1.1 ${response.status} ${response.statusText || "OK"}\r\n`;
      response.headers.forEach((value, name) => {
        if (
          !["content-length", "transfer-encoding", "connection", "content-encoding"].includes(name)
        ) {
          head += `${name}: ${value}\r\n`;
        }
      });
      const length = method === "HEAD"
        ? Number(response.headers.get("content-length") ?? 0)
        : body.length;
      head += `content-length: ${length}\r\nconnection: close\r\n\r\n`;
      await writeAll(conn, encoder.encode(head));
      if (method === "HEAD") return;
      if (truncate && body.length > 1) {
        count("truncate");
        await writeAll(conn, body.subarray(0, Math.floor(body.length / 2)));
        return;
      }
      if (
        eligible && method === "GET" && !isList && plan.stallBodyAfterBytes !== undefined &&
        body.length > plan.stallBodyAfterBytes
      ) {
        count("stall");
        await writeAll(conn, body.subarray(0, plan.stallBodyAfterBytes));
        // Silent from here; the client's own timeout has to notice and hang up.
        const sink = new Uint8Array(1024);
        while ((await conn.read(sink)) !== null) { /* until the client closes */ }
        return;
      }
      if (eligible && plan.throttleBytesPerSecond !== undefined) {
        count("throttled");
        const step = 16 * 1024;
        for (let at = 0; at < body.length; at += step) {
          await writeAll(conn, body.subarray(at, Math.min(body.length, at + step)));
          await new Promise((r) => setTimeout(r, (step / plan.throttleBytesPerSecond!) * 1000));
        }
        return;
      }
      await writeAll(conn, body);
    } catch {
      // a client that went away mid-answer: nothing to do
    } finally {
      // Whatever way the request ended (answered, faulted, HEAD), it has been handled.
      if (n !== undefined) tripped(n, "after");
      open.delete(conn);
      try {
        conn.close();
      } catch {
        // already closed
      }
    }
  };

  const serving = (async () => {
    for await (const conn of listener) handle(conn);
  })().catch(() => {});

  return {
    endpoint: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    stats,
    setPlan(next) {
      plan = next;
      listPages = 0;
    },
    tripAt(nth, when, action) {
      trip = { at: stats.requests + nth, when, action };
    },
    holdAt(nth) {
      let release!: (forward: boolean) => void;
      const released = new Promise<boolean>((resolve) => release = resolve);
      hold?.release(false);
      const armed = { at: stats.requests + nth, released, release };
      hold = armed;
      return (forward) => {
        release(forward);
        // A hold whose request never came (the client was killed first) must not outlive its
        // run: left armed, it caught (and, released with false, dropped) a request of the
        // next client at the same count — which shifted that client's requests by one, so a
        // kill placed at its last request never came.
        if (hold === armed) hold = undefined;
      };
    },
    barrier(count, match, timeoutMs = 30_000) {
      openGate();
      gate = { count, match, waiting: [], timer: setTimeout(openGate, timeoutMs) };
    },
    async stop() {
      openGate();
      hold?.release(false);
      listener.close();
      for (const conn of open) {
        try {
          conn.close();
        } catch {
          // already closed
        }
      }
      await serving;
    },
  };
}

/** `server` as a client sees it through `proxy` (for `commonFlags` and the like). */
export function throughProxy(server: S3Server, proxy: FaultProxy): S3Server {
  return { ...server, endpoint: proxy.endpoint };
}
