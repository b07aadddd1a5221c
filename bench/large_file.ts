/**
 * Large files and slow links, measured by hand (not part of `npm test`):
 *
 *   deno run --allow-all bench/large_file.ts [GiB=1]
 *
 * 1. Peak RSS of this process while it pushes, then pulls, one file of GiB gibibytes against
 *    s3s-fs on loopback (sampled every 20 ms with `Deno.memoryUsage().rss`).
 * 2. A pull of 96 MiB through the fault proxy throttled to 3 MB/s (moto behind it: the proxy
 *    rewrites the Host header, which s3s-fs's signature check refuses), with the default 30 s
 *    stall timeout: the whole transfer takes longer than 30 s, and must complete.
 *
 * Prints one JSON object; bench/LARGE_FILES.md records a run.
 *
 * @module
 */
import { DenoCacheFs } from "../js/io/cache_fs.ts";
import { pull } from "../js/ops/pull.ts";
import { push } from "../js/ops/push.ts";
import { S3Store } from "../js/io/s3.ts";
import { startFaultProxy } from "../tests/harness/fault_proxy.ts";
import { startServer } from "../tests/harness/servers.ts";

const MiB = 1024 * 1024;
const REL = "data/aws/ec2/vpc/m-1/state/1/raw";
const gib = Number(Deno.args[0] ?? "1");

/** Writes `size` bytes of a cheap pattern to `path`, 8 MiB at a time. */
async function writeBig(path: string, size: number): Promise<void> {
  const file = await Deno.open(path, { create: true, write: true, truncate: true });
  const block = new Uint8Array(8 * MiB);
  for (let i = 0; i < block.length; i++) block[i] = (i * 2654435761) >>> 24;
  for (let at = 0; at < size; at += block.length) {
    block[0] = at / block.length; // no two blocks alike
    await file.write(block.subarray(0, Math.min(block.length, size - at)));
  }
  file.close();
}

/** Runs `work` while sampling RSS; returns its time and the peak. */
async function measured<T>(work: () => Promise<T>) {
  let peak = Deno.memoryUsage().rss;
  const timer = setInterval(() => peak = Math.max(peak, Deno.memoryUsage().rss), 20);
  const started = performance.now();
  try {
    const result = await work();
    return { result, seconds: (performance.now() - started) / 1000, peakRssMiB: peak / MiB };
  } finally {
    clearInterval(timer);
  }
}

async function bigFile() {
  const size = gib * 1024 * MiB;
  const server = await startServer("s3s-fs");
  const source = await Deno.makeTempDir({ prefix: "s3sync-bench-large-" });
  const target = await Deno.makeTempDir({ prefix: "s3sync-bench-large-" });
  const store = await server.bucket("large");
  try {
    await Deno.mkdir(`${source}/data/aws/ec2/vpc/m-1/state/1`, { recursive: true });
    await writeBig(`${source}/${REL}`, size);
    const baseline = Deno.memoryUsage().rss / MiB;
    const pushed = await measured(() =>
      push({ store, cache: new DenoCacheFs(source), lock: false })
    );
    if (pushed.result.failures.length > 0) throw new Error(JSON.stringify(pushed.result.failures));
    const pulled = await measured(() =>
      pull({ store, cache: new DenoCacheFs(target), lock: false })
    );
    if (pulled.result.failures.length > 0) throw new Error(JSON.stringify(pulled.result.failures));
    const same = (await Deno.stat(`${target}/${REL}`)).size === size;
    return {
      bytes: size,
      baselineRssMiB: Math.round(baseline),
      push: { seconds: +pushed.seconds.toFixed(1), peakRssMiB: Math.round(pushed.peakRssMiB) },
      pull: { seconds: +pulled.seconds.toFixed(1), peakRssMiB: Math.round(pulled.peakRssMiB) },
      sizeMatches: same,
    };
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(source, { recursive: true });
    await Deno.remove(target, { recursive: true });
  }
}

async function slowLink() {
  const size = 96 * MiB;
  const rate = 3_000_000;
  const server = await startServer("moto");
  const source = await Deno.makeTempDir({ prefix: "s3sync-bench-slow-" });
  const target = await Deno.makeTempDir({ prefix: "s3sync-bench-slow-" });
  const store = await server.bucket("slow");
  const proxy = startFaultProxy(server.endpoint, { seed: 1, throttleBytesPerSecond: rate });
  const slow = new S3Store({ ...server.storeOptions("slow"), endpoint: proxy.endpoint });
  try {
    await Deno.mkdir(`${source}/data/aws/ec2/vpc/m-1/state/1`, { recursive: true });
    await writeBig(`${source}/${REL}`, size);
    const pushed = await push({ store, cache: new DenoCacheFs(source), lock: false });
    if (pushed.failures.length > 0) throw new Error(JSON.stringify(pushed.failures));
    const pulled = await measured(() =>
      pull({ store: slow, cache: new DenoCacheFs(target), lock: false })
    );
    return {
      bytes: size,
      throttleBytesPerSecond: rate,
      stallTimeoutSeconds: 30,
      seconds: +pulled.seconds.toFixed(1),
      failures: pulled.result.failures,
      downloaded: pulled.result.downloaded,
      mbPerSecond: +(size / pulled.seconds / 1e6).toFixed(2),
    };
  } finally {
    slow.destroy();
    store.destroy();
    await proxy.stop();
    await server.stop();
    await Deno.remove(source, { recursive: true });
    await Deno.remove(target, { recursive: true });
  }
}

console.log(JSON.stringify({ large: await bigFile(), slowLink: await slowLink() }, null, 2));
