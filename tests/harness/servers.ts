/**
 * Real S3 servers for the integration tests: moto (faithful ETags and conditional writes) and
 * s3s-fs (filesystem-backed, fast), each started on 127.0.0.1 with a free port and stopped by
 * the test that started it.
 *
 * s3s-fs runs as `s3sync-test-s3` (tools/s3s-server, installed by `npm run setup`): s3s-fs's own
 * storage and protocol layer behind a listener with `TCP_NODELAY` on. The stock binary leaves
 * Nagle's algorithm on, so a GET on a kept-alive connection waited ~40 ms for the client's
 * delayed ACK, a stall S3 does not have.
 *
 * @module
 */
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { S3Store, type S3StoreOptions } from "../../js/io/s3.ts";

/** Which server. */
export type ServerKind = "moto" | "s3s-fs";

/** Static test credentials (both servers accept them; nothing leaves loopback). */
export const TEST_CREDENTIALS = {
  accessKeyId: "s3sync-test",
  secretAccessKey: "s3sync-test-secret",
};

/** A running server. */
export interface S3Server {
  /** Which server. */
  kind: ServerKind;
  /** `http://127.0.0.1:PORT`. */
  endpoint: string;
  /** Creates a bucket and returns a store on it. */
  bucket(name: string, options?: Partial<S3StoreOptions>): Promise<S3Store>;
  /** Options to build more stores on a bucket (other "processes"). */
  storeOptions(bucket: string, options?: Partial<S3StoreOptions>): S3StoreOptions;
  /** Stops the server and removes its data. */
  stop(): Promise<void>;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** The binary that serves s3s-fs's storage (see the module docs). */
const S3S_FS_BINARY = "s3sync-test-s3";

/** Starts `command`; a server that is not installed is named with the step that installs it. */
function spawnServer(command: Deno.Command, kind: ServerKind): Deno.ChildProcess {
  try {
    return command.spawn();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      const binary = kind === "moto" ? "moto_server" : S3S_FS_BINARY;
      throw new Error(`${kind}: ${binary} is not installed: run \`npm run setup\` first`);
    }
    throw error;
  }
}

async function waitForPort(port: number, child: Deno.ChildProcess, what: string): Promise<void> {
  let exited = false;
  child.status.then(() => exited = true);
  for (let i = 0; i < 300; i++) {
    if (exited) throw new Error(`${what} exited before listening`);
    try {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      conn.close();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${what} did not listen on ${port} within 30 s`);
}

/**
 * Starts a server of `kind`.
 *
 * @param kind moto or s3s-fs
 * @param options s3s-fs only: where to keep its data, and whether to keep it after `stop`
 */
export async function startServer(
  kind: ServerKind,
  options: { dataDir?: string; keepData?: boolean } = {},
): Promise<S3Server> {
  const port = freePort();
  let dataDir: string | undefined;
  let command: Deno.Command;
  if (kind === "moto") {
    const bin = Deno.env.get("MOTO_SERVER_BIN");
    if (!bin) throw new Error("MOTO_SERVER_BIN is not set: run the tests through `npm test`");
    command = new Deno.Command(bin, {
      args: ["-H", "127.0.0.1", "-p", String(port)],
      stdout: "null",
      stderr: "null",
    });
  } else {
    dataDir = options.dataDir ?? await Deno.makeTempDir({ prefix: "s3sync-s3s-" });
    await Deno.mkdir(dataDir, { recursive: true });
    command = new Deno.Command(S3S_FS_BINARY, {
      args: [
        "--host",
        "127.0.0.1",
        "--port",
        String(port),
        "--access-key",
        TEST_CREDENTIALS.accessKeyId,
        "--secret-key",
        TEST_CREDENTIALS.secretAccessKey,
        dataDir,
      ],
      stdout: "null",
      stderr: "null",
    });
  }
  const child = spawnServer(command, kind);
  await waitForPort(port, child, kind);
  const endpoint = `http://127.0.0.1:${port}`;
  const storeOptions = (bucket: string, options: Partial<S3StoreOptions> = {}): S3StoreOptions => ({
    bucket,
    endpoint,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: TEST_CREDENTIALS,
    requestTimeoutMs: 30_000,
    ...options,
  });
  return {
    kind,
    endpoint,
    storeOptions,
    async bucket(name, options = {}) {
      const admin = new S3Client({
        endpoint,
        region: "us-east-1",
        forcePathStyle: true,
        credentials: TEST_CREDENTIALS,
      });
      try {
        await admin.send(new CreateBucketCommand({ Bucket: name }));
      } finally {
        admin.destroy();
      }
      return new S3Store(storeOptions(name, options));
    },
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch {
        // already gone
      }
      // Seen here: after many SIGKILLed CLI children, the status of an s3s-fs that has exited
      // (and been reaped) sometimes never resolves. Wait for it, but not forever.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        child.status,
        new Promise((resolve) => timer = setTimeout(resolve, 5_000)),
      ]);
      clearTimeout(timer);
      if (dataDir && !options.keepData) {
        await Deno.remove(dataDir, { recursive: true }).catch(() => {});
      }
    },
  };
}

/** Both server kinds, for tests that run against each. */
export const SERVER_KINDS: ServerKind[] = ["moto", "s3s-fs"];
